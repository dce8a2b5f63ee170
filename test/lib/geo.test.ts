/**
 * The one geometry module: reference distances, the [lon, lat] ring convention (a ring given in
 * the other order must give a different answer), and the config's [lat, lon] swap.
 */
import { expect } from 'chai';
import { bearingDeg, centralAngle, distanceToPolygonM, EARTH_RADIUS_M, haversineM, haversineNm, pointInPolygon, ringFromLatLon, type LonLat } from '../../src/lib/geo.js';

describe('src/lib/geo', () => {
  it('haversine: a quarter of a meridian, one degree of longitude on the equator, and a known city pair', () => {
    expect(centralAngle({ lat: 0, lon: 0 }, { lat: 90, lon: 0 })).to.be.closeTo(Math.PI / 2, 1e-12);
    expect(haversineM({ lat: 0, lon: 0 }, { lat: 0, lon: 1 })).to.be.closeTo((EARTH_RADIUS_M * Math.PI) / 180, 1e-6);
    // 1° of arc is 60 nm by the definition of the nautical mile (to the radius's rounding)
    expect(haversineNm({ lat: 10, lon: 20 }, { lat: 11, lon: 20 })).to.be.closeTo(60.04, 0.01);
    // JFK (40.6413, -73.7781) to LAX (33.9416, -118.4085): 3,974 km on the mean-radius sphere
    // (the WGS-84 ellipsoid gives 3,983 km; a spherical formula is 0.2 % short here)
    expect(haversineM({ lat: 40.6413, lon: -73.7781 }, { lat: 33.9416, lon: -118.4085 }) / 1000).to.be.closeTo(3974.3, 0.5);
    expect(haversineM({ lat: 12, lon: 34 }, { lat: 12, lon: 34 })).to.equal(0);
  });

  it('bearing: the four cardinal directions', () => {
    expect(bearingDeg({ lat: 0, lon: 0 }, { lat: 1, lon: 0 })).to.be.closeTo(0, 1e-9);
    expect(bearingDeg({ lat: 0, lon: 0 }, { lat: 0, lon: 1 })).to.be.closeTo(90, 1e-9);
    expect(bearingDeg({ lat: 1, lon: 0 }, { lat: 0, lon: 0 })).to.be.closeTo(180, 1e-9);
    expect(bearingDeg({ lat: 0, lon: 1 }, { lat: 0, lon: 0 })).to.be.closeTo(270, 1e-9);
  });

  it('rings are [lon, lat]: a thin box east of the prime meridian answers only in that order', () => {
    // lon 10..11, lat 0..50: a tall thin box; swapped, it would be lon 0..50, lat 10..11
    const ring: LonLat[] = [
      [10, 0],
      [11, 0],
      [11, 50],
      [10, 50],
    ];
    expect(pointInPolygon({ lat: 25, lon: 10.5 }, ring)).to.equal(true);
    expect(pointInPolygon({ lat: 10.5, lon: 25 }, ring)).to.equal(false);
    expect(pointInPolygon({ lat: 25, lon: 12 }, ring)).to.equal(false);
    // 0.5° of longitude at 25°N from the east edge
    expect(distanceToPolygonM({ lat: 25, lon: 11.5 }, ring)).to.be.closeTo(((0.5 * Math.PI) / 180) * EARTH_RADIUS_M * Math.cos((25 * Math.PI) / 180), 1e-6);
    expect(distanceToPolygonM({ lat: 25, lon: 10.5 }, ring), 'inside: distance to the nearest edge').to.be.closeTo(((0.5 * Math.PI) / 180) * EARTH_RADIUS_M * Math.cos((25 * Math.PI) / 180), 1e-6);
  });

  it('ringFromLatLon swaps the config order once', () => {
    expect(ringFromLatLon([
      [36, -115],
      [37, -114],
    ])).to.deep.equal([
      [-115, 36],
      [-114, 37],
    ]);
  });
});
