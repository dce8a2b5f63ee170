import { expect } from 'chai';
import fc from 'fast-check';
import Joi, { type ObjectSchema } from 'joi';
import { fastAccept } from '../../src/http/fast-accept.js';
import { validatePart } from '../../src/http/validation.js';
import { telemetryFrameSchema } from '../../src/verdicts/telemetry.js';

// The shortcut past joi (fast-accept.ts) must say yes exactly when joi, as validatePart calls it
// for a JSON body, accepts the value and returns it unchanged; -0 (which joi turns into 0) and any
// value the predicate is unsure of go to joi. Checked against joi itself on generated bodies that
// sit on and around every bound of the telemetry frame.

const JOI_BODY = { abortEarly: false, convert: false, allowUnknown: false, errors: { label: false } } as const;

/** joi's verdict: accepted with a value deep-equal to the input (no conversion, no default). */
function joiAcceptsUnchanged(schema: ObjectSchema, value: unknown): boolean {
  const r = schema.validate(value, JOI_BODY);
  if (r.error) return false;
  try {
    expect(r.value).to.deep.equal(value);
    return true;
  } catch {
    return false;
  }
}

const hasNegativeZero = (v: unknown): boolean =>
  Object.is(v, -0) || (v !== null && typeof v === 'object' && Object.values(v).some(hasNegativeZero));

/** Numbers on, just inside and just outside [lo, hi], and the kinds of value JSON can carry instead. */
function numberAround(lo: number, hi: number): fc.Arbitrary<unknown> {
  const eps = 1e-9;
  return fc.oneof(
    fc.constantFrom(lo, hi, lo - eps, hi + eps, lo + eps, hi - eps, (lo + hi) / 2, 0, -0, 1.5, 2 ** 53, -(2 ** 53), 1e308, -1e308),
    fc.double({ min: lo - 10, max: hi + 10, noNaN: true, noDefaultInfinity: true }),
    fc.integer({ min: Math.ceil(lo) - 3, max: Math.floor(hi) + 3 }),
    fc.constantFrom('1', '', null, true, [], {}, [1]),
  );
}

const ISO_LIKE = fc.oneof(
  fc.date({ min: new Date('1900-01-01'), max: new Date('2200-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom('2026-01-01T00:00:00Z', '2026-01-01', '2026-13-01T00:00:00Z', '2026-01-01T25:00:00Z', 'yesterday', '', 'x'.repeat(41), '2026-01-01T00:00:00.000000000000000000000000Z', 12),
);

const FRAME_FIELDS = {
  track_id: fc.oneof(fc.stringMatching(/^[A-Za-z0-9._:-]{1,64}$/), fc.constantFrom('', 'a b', 'x'.repeat(64), 'x'.repeat(65), 'é', 'ABC123\n', 7, null)),
  source: fc.constantFrom('OpenDroneID', 'ADS-B', 'MAVLink', 'adsb', '', null, 1),
  lat: numberAround(-90, 90),
  lon: numberAround(-180, 180),
  alt_m: numberAround(-500, 20000),
  speed_mps: numberAround(0, 400),
  heading_deg: numberAround(0, 360),
  rssi_dbm: numberAround(-150, 0),
  id_authenticated: fc.constantFrom(true, false, 'true', 1, 0, null),
  timestamp_skew_s: numberAround(-3600, 3600),
  n_observations: numberAround(1, 100000),
  ts_utc: ISO_LIKE,
};

/** As JSON.parse makes them: plain objects (fast-check's records have a null prototype); -0 kept. */
const plain = (o: object): Record<string, unknown> => ({ ...o });

/** A frame whose keys are each present or not, valid or not, sometimes with a key joi does not know. */
const frames = fc
  .record({ ...FRAME_FIELDS, extra: fc.constantFrom(1, 'x') }, { requiredKeys: [] })
  .chain((f) => fc.boolean().map((keepExtra) => plain(keepExtra ? f : (({ extra: _extra, ...rest }) => rest)(f))));

/** Mostly valid frames (valid values for every present key), so agreement is checked on yeses too. */
const validFrames = fc.record(
  {
    track_id: fc.stringMatching(/^[A-Za-z0-9._:-]{1,64}$/),
    source: fc.constantFrom('OpenDroneID', 'ADS-B', 'MAVLink'),
    lat: fc.double({ min: -90, max: 90, noNaN: true }),
    lon: fc.double({ min: -180, max: 180, noNaN: true }),
    alt_m: fc.integer({ min: -500, max: 20000 }),
    heading_deg: fc.double({ min: 0, max: 359.999, noNaN: true }),
    n_observations: fc.integer({ min: 1, max: 100000 }),
    ts_utc: fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
  },
  { requiredKeys: ['track_id', 'lat', 'lon'] },
).map(plain);

describe('fast-accept: the shortcut past joi for plainly valid JSON bodies', () => {
  const accept = fastAccept(telemetryFrameSchema)!;

  it('compiles the telemetry frame and the batch of frames', () => {
    expect(accept).to.be.a('function');
    expect(fastAccept(Joi.object({ frames: Joi.array().items(telemetryFrameSchema).min(1).max(64).required() }))).to.be.a('function');
  });

  it('agrees with joi on every generated frame, valid or not (-0 is left to joi)', () => {
    let yes = 0;
    fc.assert(
      fc.property(fc.oneof(frames, validFrames), (frame) => {
        const fast = accept(frame);
        if (fast) yes++;
        expect(fast, JSON.stringify(frame)).to.equal(joiAcceptsUnchanged(telemetryFrameSchema, frame) && !hasNegativeZero(frame));
      }),
      { numRuns: 4000, seed: 20261126 },
    );
    expect(yes).to.be.greaterThan(1000); // the shortcut is taken, not only refused
  });

  it('agrees with joi on batches of frames, within and beyond the batch limits', () => {
    const batch = Joi.object({ frames: Joi.array().items(telemetryFrameSchema).min(1).max(3).required() });
    const acceptBatch = fastAccept(batch)!;
    fc.assert(
      fc.property(fc.array(fc.oneof(validFrames, frames), { maxLength: 5 }), (list) => {
        const body = { frames: list };
        expect(acceptBatch(body)).to.equal(joiAcceptsUnchanged(batch, body) && !hasNegativeZero(body));
      }),
      { numRuns: 1500, seed: 7 },
    );
    expect(acceptBatch({})).to.equal(false);
  });

  it('refuses what joi must see: unknown and __proto__ keys, other prototypes, arrays and scalars at the top', () => {
    const ok = { track_id: 'abc', lat: 1, lon: 2 };
    expect(accept(ok)).to.equal(true);
    expect(accept(JSON.parse('{"track_id":"abc","lat":1,"lon":2,"__proto__":{"x":1}}'))).to.equal(false);
    expect(accept({ ...ok, other: 1 })).to.equal(false);
    expect(accept(Object.assign(Object.create({ inherited: 1 }), ok))).to.equal(false);
    expect(accept([ok])).to.equal(false);
    expect(accept(null)).to.equal(false);
    expect(accept('abc')).to.equal(false);
    expect(accept({ track_id: 'abc', lat: 1 })).to.equal(false); // lon is required
  });

  it('validatePart gives the same value and issues with the shortcut as joi gives without it', () => {
    const ok = { track_id: 'abc', source: 'ADS-B', lat: 1, lon: 2, ts_utc: '2026-01-01T00:00:00Z' };
    expect(validatePart(telemetryFrameSchema, 'body', ok)).to.deep.equal({ value: ok, issues: [] });
    const bad = { track_id: 'abc', lat: 91, lon: 2 };
    expect(validatePart(telemetryFrameSchema, 'body', bad).issues).to.deep.equal([
      { type: 'less_than_equal', loc: ['body', 'lat'], msg: 'Input should be less than or equal to 90', input: 91, ctx: { le: 90 } },
    ]);
  });

  it('compiles no predicate for a schema outside the subset (so joi validates every value)', () => {
    const outside: ObjectSchema[] = [
      Joi.object({ a: Joi.number().default(1) }),
      Joi.object({ a: Joi.number(), b: Joi.number().min(Joi.ref('a')) }),
      Joi.object({ a: Joi.number(), b: Joi.number() }).and('a', 'b'),
      Joi.object({ a: Joi.number().allow(null) }),
      Joi.object({ a: Joi.alternatives(Joi.number(), Joi.string()) }),
      Joi.object({ a: Joi.string().trim() }).prefs({ convert: true }),
      Joi.object({ a: Joi.number() }).unknown(true),
      Joi.object({ a: Joi.number().precision(2) }),
      Joi.object({ a: Joi.number().forbidden() }),
      Joi.object({ a: Joi.array().items(Joi.number(), Joi.string()) }),
      Joi.object({ a: Joi.string() }).pattern(/^b/, Joi.number()),
      Joi.object({ a: Joi.string().pattern(/x/, { invert: true }) }).rename('b', 'a'),
      Joi.object({ a: Joi.date() }),
    ];
    for (const schema of outside) expect(fastAccept(schema), JSON.stringify(schema.describe())).to.equal(null);
  });

  it('a string rule outside the subset is checked by joi on that key alone', () => {
    const schema = Joi.object({ id: Joi.string().guid(), at: Joi.string().isoDate() });
    const a = fastAccept(schema)!;
    expect(a({ id: '3b241101-e2bb-4255-8caf-4136c566a962', at: '2026-01-01T00:00:00Z' })).to.equal(true);
    expect(a({ id: 'not-a-guid' })).to.equal(false);
    expect(a({ at: '2026-02-30T00:00:00Z' })).to.equal(joiAcceptsUnchanged(schema, { at: '2026-02-30T00:00:00Z' }));
    expect(a({ at: 'soon' })).to.equal(false);
  });
});
