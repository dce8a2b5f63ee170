/**
 * Schema-shape validation of a CoT event. Tier 1 is parity with the MITRE CoT 2.0 base schema
 * (Event-PUBLIC.xsd) as libxml2 applies it, so "valid" here means what `xmllint --schema` says (a
 * differential test holds us to it). Tier 2 are warnings: useful observations that the schema does
 * not make errors of (staleness, sentinels, TAK conventions, MITRE sub-schema ranges that the base
 * schema's lax `detail` does not enforce).
 */
import { isElement, XMLNS_URI, type XmlElement } from './xml.js';
import { checkDecimal, dateTimeMs, HOW_PATTERN, isDateTime, QOS_PATTERN, TYPE_PATTERN } from './xsd-lexical.js';

export interface CotIssue {
  /** XPath-like location, e.g. `/event/point/@lat`. */
  path: string;
  code: string;
  message: string;
  /** The offending value, when there is one. */
  value?: string;
}

export interface CotValidation {
  valid: boolean;
  errors: CotIssue[];
  warnings: CotIssue[];
}

const EVENT_REQUIRED = ['version', 'uid', 'type', 'how', 'time', 'start', 'stale'];
const EVENT_OPTIONAL = ['access', 'qos', 'opex'];
const POINT_ATTRS = ['lat', 'lon', 'hae', 'ce', 'le'];
const SENTINEL = /^9{6,}(\.0*)?$/;

const isWhitespace = (s: string) => /^[ \t\n\r]*$/.test(s);
const attrsOf = (el: XmlElement) => el.attrs.filter((a) => a.uri !== XMLNS_URI);
const attr = (el: XmlElement, name: string) => el.attrs.find((a) => a.uri === '' && a.name === name)?.value;
/** A declared element of the base schema: no namespace (the schema has no target namespace). */
const isDecl = (el: XmlElement, name: string) => el.uri === '' && el.local === name;

type Report = (path: string, code: string, message: string, value?: string) => void;

function checkAttrs(el: XmlElement, path: string, required: string[], optional: string[], err: Report): void {
  const allowed = new Set([...required, ...optional]);
  for (const a of attrsOf(el)) {
    if (a.uri !== '' || !allowed.has(a.name)) err(`${path}/@${a.name}`, 'unknown_attribute', `attribute '${a.name}' is not allowed on <${el.local}>`, a.value);
  }
  for (const name of required) if (attr(el, name) === undefined) err(`${path}/@${name}`, 'missing_attribute', `attribute '${name}' is required on <${el.local}>`);
}

/** Element-only content: whitespace text is fine, other text and any CDATA are not (libxml2). */
function checkNoText(el: XmlElement, path: string, err: Report, empty = false): void {
  for (const c of el.children) {
    if (isElement(c)) continue;
    if (c.cdata || !isWhitespace(c.text) || (empty && c.text !== '')) {
      err(path, 'text_not_allowed', empty ? `<${el.local}> must be empty` : `text is not allowed directly inside <${el.local}>`);
      return;
    }
  }
}

function checkPoint(p: XmlElement, path: string, err: Report): void {
  checkAttrs(p, path, POINT_ATTRS, [], err);
  const ranges: Record<string, [number, number] | []> = { lat: [-90, 90], lon: [-180, 180], hae: [], ce: [], le: [] };
  for (const [name, range] of Object.entries(ranges)) {
    const v = attr(p, name);
    if (v === undefined) continue;
    const code = checkDecimal(v, range[0], range[1]);
    if (code === 'invalid_decimal') err(`${path}/@${name}`, code, `'${name}' must be a fixed-point decimal (no exponent, NaN or INF)`, v);
    else if (code) err(`${path}/@${name}`, code, `'${name}' must be within [${range[0]}, ${range[1]}]`, v);
  }
  if (p.children.some(isElement)) err(path, 'element_not_allowed', '<point> must be empty');
  else checkNoText(p, path, err, true);
}

function checkDetail(d: XmlElement, path: string, err: Report): void {
  checkNoText(d, path, err);
  laxDescendants(d, path, err);
}

/** `detail` holds `xs:any processContents="lax"`: any descendant named like a declared element is validated as one. */
function laxDescendants(el: XmlElement, path: string, err: Report): void {
  el.children.filter(isElement).forEach((c, i) => {
    const p = `${path}/${c.name}[${i + 1}]`;
    if (isDecl(c, 'event')) checkEvent(c, p, err);
    else if (isDecl(c, 'point')) checkPoint(c, p, err);
    else if (isDecl(c, 'detail')) checkDetail(c, p, err);
    else laxDescendants(c, p, err);
  });
}

function checkEvent(ev: XmlElement, path: string, err: Report): void {
  checkAttrs(ev, path, EVENT_REQUIRED, EVENT_OPTIONAL, err);
  const v = (name: string) => attr(ev, name);
  const version = v('version');
  if (version !== undefined) {
    const code = checkDecimal(version, 2);
    if (code) err(`${path}/@version`, code, "'version' must be a decimal of at least 2", version);
  }
  const type = v('type');
  if (type !== undefined && !TYPE_PATTERN.test(type)) err(`${path}/@type`, 'pattern_mismatch', "'type' must match \\w+(-\\w+)*(;[^;]*)? (XSD \\w: no punctuation, separators or controls)", type);
  const how = v('how');
  if (how !== undefined && !HOW_PATTERN.test(how)) err(`${path}/@how`, 'pattern_mismatch', "'how' must match \\w(-\\w+)*", how);
  const qos = v('qos');
  if (qos !== undefined && !QOS_PATTERN.test(qos)) err(`${path}/@qos`, 'pattern_mismatch', "'qos' must match \\d-\\w-\\w", qos);
  for (const name of ['time', 'start', 'stale']) {
    const t = v(name);
    if (t !== undefined && !isDateTime(t)) err(`${path}/@${name}`, 'invalid_datetime', `'${name}' must be an xs:dateTime`, t);
  }
  checkNoText(ev, path, err);
  const kids = ev.children.filter(isElement);
  const points = kids.filter((k) => isDecl(k, 'point'));
  const details = kids.filter((k) => isDecl(k, 'detail'));
  for (const k of kids) if (!isDecl(k, 'point') && !isDecl(k, 'detail')) err(`${path}/${k.name}`, 'element_not_allowed', `<${k.name}> is not allowed in <event> (only point and detail)`);
  if (points.length === 0) err(`${path}/point`, 'missing_element', '<event> needs exactly one <point>');
  if (points.length > 1) err(`${path}/point[2]`, 'element_not_allowed', '<event> allows one <point>');
  if (details.length > 1) err(`${path}/detail[2]`, 'element_not_allowed', '<event> allows at most one <detail>');
  if (points[0]) checkPoint(points[0], `${path}/point`, err);
  if (details[0]) checkDetail(details[0], `${path}/detail`, err);
}

function warnings(ev: XmlElement, nowMs: number, warn: Report): void {
  const time = attr(ev, 'time') ?? '';
  const start = attr(ev, 'start') ?? '';
  const stale = attr(ev, 'stale') ?? '';
  if (time && !/(Z|[+-]\d{2}:\d{2})$/.test(time)) warn('/event/@time', 'no_time_zone', "'time' has no time zone (CoT specifies UTC, Z)", time);
  const [t, s, st] = [dateTimeMs(time), dateTimeMs(start), dateTimeMs(stale)];
  if (st < nowMs) warn('/event/@stale', 'stale', 'the event is past its stale time', stale);
  if (s > t) warn('/event/@start', 'start_after_time', "'start' is later than 'time'", start);
  if (s > st) warn('/event/@start', 'start_after_stale', "'start' is later than 'stale': the event is never valid", start);
  if (/[^\x20-\x7e]/.test(attr(ev, 'type') ?? '')) warn('/event/@type', 'non_ascii_type', "'type' has non-ASCII characters", attr(ev, 'type'));
  const point = ev.children.find((c) => isElement(c) && isDecl(c, 'point')) as XmlElement | undefined;
  for (const name of ['hae', 'ce', 'le']) {
    const v = point && attr(point, name);
    if (v && SENTINEL.test(v.trim())) warn(`/event/point/@${name}`, 'unknown_value', `'${name}' is the "unknown" sentinel`, v);
  }
  const detail = ev.children.find((c) => isElement(c) && isDecl(c, 'detail')) as XmlElement | undefined;
  for (const c of detail?.children.filter(isElement) ?? []) {
    const p = `/event/detail/${c.name}`;
    if (c.name === '__group' && attr(c, 'role') === undefined) warn(p, 'tak_missing_attribute', '__group without role (TAK schema requires it)');
    if (c.name === 'precisionlocation' && attr(c, 'altsrc') === undefined) warn(p, 'tak_missing_attribute', 'precisionlocation without altsrc (TAK schema requires it)');
    if (c.name === 'contact' && attr(c, 'callsign') === undefined) warn(p, 'tak_missing_attribute', 'contact without callsign (TAK schema requires it)');
    if (c.name === 'track') {
      // MITRE Track sub-schema: course in [0, 360), speed >= 0, slope in [-90, 90]
      const course = attr(c, 'course');
      const speed = attr(c, 'speed');
      const slope = attr(c, 'slope');
      if (course === undefined || checkDecimal(course, 0, 360) || Number(course) >= 360) warn(`${p}/@course`, 'track_course', 'track course must be a decimal in [0, 360)', course);
      if (speed === undefined || checkDecimal(speed, 0)) warn(`${p}/@speed`, 'track_speed', 'track speed must be a decimal >= 0 (m/s)', speed);
      if (slope !== undefined && checkDecimal(slope, -90, 90)) warn(`${p}/@slope`, 'track_slope', 'track slope must be a decimal in [-90, 90]', slope);
    }
  }
}

export function validateCot(root: XmlElement, nowMs = Date.now()): CotValidation {
  const errors: CotIssue[] = [];
  const warns: CotIssue[] = [];
  const report =
    (list: CotIssue[]): Report =>
    (path, code, message, value) =>
      list.push(value === undefined ? { path, code, message } : { path, code, message, value });
  if (!isDecl(root, 'event')) {
    report(errors)(`/${root.name}`, 'root_not_event', `the root must be <event> in no namespace, not <${root.name}>${root.uri ? ` in ${root.uri}` : ''}`);
    return { valid: false, errors, warnings: warns };
  }
  checkEvent(root, '/event', report(errors));
  if (errors.length === 0) warnings(root, nowMs, report(warns));
  return { valid: errors.length === 0, errors, warnings: warns };
}
