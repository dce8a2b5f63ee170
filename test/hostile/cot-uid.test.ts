/**
 * CoT uids that hide what they say: empty (or only whitespace), or holding controls (C0, DEL, C1),
 * format characters (bidi overrides and isolates such as U+202E, zero-width characters, the BOM)
 * or line and paragraph separators. XML allows them all in an attribute (C0 controls only as
 * tab, newline and carriage return), the CoT schema too; the service refuses them with 422
 * `cot_uid_invalid`, naming the code point, and stores nothing.
 */
import { expect } from 'chai';
import { withTestApp } from '../helpers/app.js';

const INGEST = '/api/svc/v1/cot/ingest';

/** `uid` is written into the attribute as is: pass character references for what XML needs escaped. */
function event(uid: string): string {
  const t = new Date().toISOString();
  return `<event version="2.0" uid="${uid}" type="a-u-A" how="m-g" time="${t}" start="${t}" stale="${t}"><point lat="1" lon="1" hae="0" ce="1" le="1"/><detail/></event>`;
}

describe('CoT uid: empty, control and bidi characters are refused', () => {
  const app = withTestApp();
  const post = (xml: string) => app().http.post(INGEST).set('content-type', 'application/xml').send(xml);
  const total = async () => (await app().http.get('/api/svc/v1/cot/status')).body.live.tracks_total as number;

  it('uid="" and whitespace-only uids are 422 cot_uid_invalid', async () => {
    const before = await total();
    for (const uid of ['', ' ', '   ', '&#x20;&#x20;']) {
      const res = await post(event(uid));
      expect(res.status, JSON.stringify(uid)).to.equal(422);
      expect(res.body.detail[0], JSON.stringify(uid)).to.deep.include({ type: 'cot_uid_invalid', loc: ['body', 'event', '@uid'], msg: 'uid must not be empty or only whitespace' });
    }
    expect(await total()).to.equal(before);
  });

  it('controls, bidi and zero-width characters, anywhere in the uid, are 422 naming the code point', async () => {
    const before = await total();
    const cases: [string, string, number][] = [
      ['evil&#x202E;gnp.exe', 'U+202E', 4], // RIGHT-TO-LEFT OVERRIDE
      ['&#x202D;abc', 'U+202D', 0], // LEFT-TO-RIGHT OVERRIDE
      ['a&#x2066;b&#x2069;', 'U+2066', 1], // LEFT-TO-RIGHT ISOLATE
      ['a&#x200F;b', 'U+200F', 1], // RIGHT-TO-LEFT MARK
      ['a&#x61C;b', 'U+061C', 1], // ARABIC LETTER MARK
      ['a&#x200B;b', 'U+200B', 1], // ZERO WIDTH SPACE
      ['a&#xFEFF;b', 'U+FEFF', 1], // BOM / ZERO WIDTH NO-BREAK SPACE
      ['a&#x9;b', 'U+0009', 1], // tab (C0)
      ['a&#xA;b', 'U+000A', 1], // newline (C0): a forged log line
      ['a&#xD;b', 'U+000D', 1],
      ['a&#x7F;b', 'U+007F', 1], // DEL
      ['a&#x85;b', 'U+0085', 1], // NEXT LINE (C1)
      ['a&#x9B;b', 'U+009B', 1], // CSI (C1): terminal escapes
      ['a&#x2028;b', 'U+2028', 1], // LINE SEPARATOR
      ['a&#x2029;b', 'U+2029', 1], // PARAGRAPH SEPARATOR
      ['a\u202eb', 'U+202E', 1], // the character itself, not a reference
    ];
    for (const [uid, cp, index] of cases) {
      const res = await post(event(uid));
      expect(res.status, uid).to.equal(422);
      const issue = res.body.detail[0];
      expect(issue, uid).to.deep.include({ type: 'cot_uid_invalid', loc: ['body', 'event', '@uid'], ctx: { character: cp, index } });
      expect(issue.msg, uid).to.equal(`uid must not contain control, format (bidi, zero-width) or separator characters: ${cp} at index ${index}`);
    }
    expect(await total()).to.equal(before);
  });

  it('ordinary uids, non-ASCII letters and inner spaces included, are still accepted', async () => {
    for (const uid of ['ANDROID-R52JB0CDC4E', 'GeoChat.ANDROID-1.All Chat Rooms.6f2b', 'drönare-1', 'طائرة-٢', '無人機', 'a&amp;b']) {
      const res = await post(event(uid));
      expect(res.status, uid).to.equal(200);
      expect(res.body.stored, uid).to.equal(true);
    }
  });
});
