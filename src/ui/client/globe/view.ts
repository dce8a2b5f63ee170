/**
 * The view: an orthographic projection (d3-geo) centred on (lon, lat) at a scale, plus the
 * visibility test (dot product with the view centre: the projection still returns coordinates for
 * the far side). Pointer, wheel and keyboard input only change this object.
 */
import { geoOrthographic, type GeoProjection } from 'd3-geo';

export interface ViewState {
  lon: number;
  lat: number;
  /** Zoom factor: 1 = the whole globe fits the canvas. */
  zoom: number;
}

export const MIN_ZOOM = 0.8;
/** About 2 m per pixel on a phone and 1.5 m on a desktop: a 3 km zone fills the screen. */
export const MAX_ZOOM = 16_000;
const RAD = Math.PI / 180;

export class View {
  readonly projection: GeoProjection = geoOrthographic().clipAngle(90).precision(1);
  width = 1;
  height = 1;
  private cx = 1;
  private sx = 0;
  private cy = 1;
  private sy = 0;
  private lon0 = 0;

  constructor(public state: ViewState) {
    this.apply();
  }

  get radius(): number {
    return (Math.min(this.width, this.height) / 2 - 8) * this.state.zoom;
  }

  resize(width: number, height: number): void {
    this.width = width;
    this.height = height;
    this.apply();
  }

  set(patch: Partial<ViewState>): void {
    const s = { ...this.state, ...patch };
    s.lat = Math.max(-89.9, Math.min(89.9, s.lat));
    s.lon = ((((s.lon + 180) % 360) + 360) % 360) - 180;
    s.zoom = Math.max(MIN_ZOOM, Math.min(MAX_ZOOM, s.zoom));
    this.state = s;
    this.apply();
  }

  rotateBy(dLon: number, dLat: number): void {
    this.set({ lon: this.state.lon + dLon, lat: this.state.lat + dLat });
  }

  zoomBy(factor: number): void {
    this.set({ zoom: this.state.zoom * factor });
  }

  /**
   * Zoom by `factor` keeping the ground point under (x, y) where it is: the wheel and the buttons
   * zoom towards the cursor or the selection, not the view centre. Off the globe it zooms on the
   * centre. A few fixed-point steps converge to a fraction of a pixel.
   */
  zoomAt(x: number, y: number, factor: number): void {
    const anchor = this.invert(x, y);
    this.zoomBy(factor);
    if (!anchor) return;
    for (let i = 0; i < 4; i++) {
      const now = this.invert(x, y);
      if (!now) return;
      const dLon = ((((anchor[0] - now[0] + 180) % 360) + 360) % 360) - 180;
      this.set({ lon: this.state.lon + dLon, lat: this.state.lat + (anchor[1] - now[1]) });
    }
  }

  /** Drag by a screen offset: the point under the pointer follows it (approximately, at the centre). */
  dragBy(dx: number, dy: number): void {
    const degPerPx = 1 / (this.radius * RAD);
    this.rotateBy(-dx * degPerPx, dy * degPerPx);
  }

  private apply(): void {
    const { lon, lat } = this.state;
    this.projection.rotate([-lon, -lat]).scale(this.radius).translate([this.width / 2, this.height / 2]);
    this.cx = Math.cos(lat * RAD);
    this.sx = Math.sin(lat * RAD);
    this.cy = Math.cos(lon * RAD);
    this.sy = Math.sin(lon * RAD);
    this.lon0 = lon * RAD;
  }

  /** True when (lon, lat) is on the visible hemisphere. */
  visible(lon: number, lat: number): boolean {
    const cl = Math.cos(lat * RAD);
    // unit vectors: centre (cx*cy, cx*sy, sx) · point (cl*cos(lon), cl*sin(lon), sin(lat))
    return this.cx * cl * (this.cy * Math.cos(lon * RAD) + this.sy * Math.sin(lon * RAD)) + this.sx * Math.sin(lat * RAD) > 0;
  }

  /**
   * Screen position of a visible point, else null. The orthographic formulas written out (the same
   * numbers as d3's projection, checked in test/ui), without d3's stream machinery: this runs for
   * every target on every overlay frame.
   */
  project(lon: number, lat: number): [number, number] | null {
    const phi = lat * RAD;
    const dl = lon * RAD - this.lon0;
    const cp = Math.cos(phi);
    const sp = Math.sin(phi);
    const cd = Math.cos(dl);
    if (this.sx * sp + this.cx * cp * cd <= 0) return null;
    const r = this.radius;
    return [this.width / 2 + r * cp * Math.sin(dl), this.height / 2 - r * (this.cx * sp - this.sx * cp * cd)];
  }

  /** project() writing into `out`; false (and `out` untouched) on the far side. */
  projectInto(lon: number, lat: number, out: [number, number]): boolean {
    const phi = lat * RAD;
    const dl = lon * RAD - this.lon0;
    const cp = Math.cos(phi);
    const sp = Math.sin(phi);
    const cd = Math.cos(dl);
    if (this.sx * sp + this.cx * cp * cd <= 0) return false;
    const r = this.radius;
    out[0] = this.width / 2 + r * cp * Math.sin(dl);
    out[1] = this.height / 2 - r * (this.cx * sp - this.sx * cp * cd);
    return true;
  }

  /** Screen angle (radians, clockwise from up) of true north at (lon, lat). */
  northAngle(lon: number, lat: number): number {
    const phi = lat * RAD;
    const dl = lon * RAD - this.lon0;
    return Math.atan2(-Math.sin(phi) * Math.sin(dl), this.cx * Math.cos(phi) + this.sx * Math.sin(phi) * Math.cos(dl));
  }

  invert(x: number, y: number): [number, number] | null {
    const dx = x - this.width / 2;
    const dy = y - this.height / 2;
    if (dx * dx + dy * dy > this.radius * this.radius) return null;
    const p = this.projection.invert?.([x, y]);
    return p ? [p[0], p[1]] : null;
  }
}
