import { expect } from 'chai';
import { BadPayload, inBox, parseSnapshot } from '../../src/adsb/normalise.js';
import { BAD_AIRCRAFT, GOOD_AIRCRAFT } from '../helpers/fake-adsb-upstream.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

describe('ADS-B normalisation', () => {
  it('keeps only military entries with a current position, normalised and sorted by hex', () => {
    const s = parseSnapshot({ ac: [...BAD_AIRCRAFT, ...GOOD_AIRCRAFT], now: NOW }, 'fake', 60, NOW + 5);
    expect(s.aircraft.map((a) => a.hex)).to.deep.equal(['43c6f1', 'ae0002', 'ae01c5']);
    expect(s.upstreamTotal).to.equal(9);
    expect(s.dropped).to.deep.equal({ no_position: 3, stale_position: 1, not_military: 2, duplicate: 0 });
    const c17 = s.aircraft.find((a) => a.hex === 'ae01c5')!;
    expect(c17).to.deep.include({ callsign: 'RCH123', registration: '05-5140', type_code: 'C17', on_ground: false, alt_baro_ft: 32000, alt_geom_ft: 32575, ground_speed_kt: 450.2, vertical_rate_fpm: -64, squawk: '1234', position_source: 'adsb_icao', nac_p: 9, provider: 'fake', lat: 38.5, lon: -77.1 });
    expect(c17.position_time).to.equal(new Date(NOW - 500).toISOString());
    const tisb = s.aircraft.find((a) => a.hex === 'ae0002')!;
    expect(tisb).to.deep.include({ non_icao: true, on_ground: true, alt_baro_ft: null, position_source: 'tisb' });
    expect(s.aircraft.find((a) => a.hex === '43c6f1')!.position_source).to.equal('mlat');
  });

  it('never reads rr_lat/rr_lon or lastPosition, and de-duplicates by hex keeping the first', () => {
    const s = parseSnapshot({ ac: [{ hex: 'AE0009', dbFlags: 1, lat: 1, lon: 2 }, { hex: 'ae0009', dbFlags: 1, lat: 3, lon: 4 }, { hex: 'ae0010', dbFlags: 1, rr_lat: 5, rr_lon: 6, lastPosition: { lat: 5, lon: 6 } }] }, 'f', 60, NOW);
    expect(s.aircraft.map((a) => [a.hex, a.lat, a.lon])).to.deep.equal([['ae0009', 1, 2]]);
    expect(s.dropped.duplicate).to.equal(1);
  });

  it('accepts `aircraft` and `now` in seconds; rejects anything that is not the envelope', () => {
    const s = parseSnapshot({ aircraft: [], now: NOW / 1000 }, 'f', 60, 0);
    expect(s.upstreamNowMs).to.equal(NOW);
    for (const bad of [null, [], 'x', { ac: 'no' }, { msg: 'No error' }, { ac: [{ lat: 1 }] }, { ac: [42] }]) {
      expect(() => parseSnapshot(bad, 'f', 60, 0), JSON.stringify(bad)).to.throw(BadPayload);
    }
  });

  it('filters boxes inclusively and across the antimeridian when lon_min > lon_max', () => {
    const box = { lat_min: 10, lat_max: 20, lon_min: 170, lon_max: -170 };
    expect(inBox({ lat: 15, lon: 175 }, box)).to.equal(true);
    expect(inBox({ lat: 15, lon: -175 }, box)).to.equal(true);
    expect(inBox({ lat: 15, lon: 0 }, box)).to.equal(false);
    expect(inBox({ lat: 20, lon: -170 }, box)).to.equal(true);
    expect(inBox({ lat: 20.01, lon: 180 }, box)).to.equal(false);
  });
});
