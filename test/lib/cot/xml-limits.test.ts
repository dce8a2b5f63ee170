import { expect } from 'chai';
import { parseXml, XmlRejection, type CotLimits } from '../../../src/lib/cot/xml.js';

// One attribute value's limit counts characters (code points), as every string
// limit of the service does; an emoji is one character though it is two UTF-16 code units.

const LIMITS: CotLimits = { maxDepth: 16, maxElements: 512, maxAttrsPerElement: 64, maxAttributes: 4096, maxDetailChildren: 512, maxNameLen: 64, maxAttrValueLen: 2048, maxNameChars: 65536, maxAttrChars: 65536, maxReferences: 65536, maxTextChars: 16384, maxUidLen: 256 };
const EMOJI = '\u{1F6F8}';

/** The kind and limit of a refusal, or null when the document is read. */
function refusal(xml: string): { kind: string; limit: unknown; max: unknown } | null {
  try {
    parseXml(xml, LIMITS);
    return null;
  } catch (err) {
    if (!(err instanceof XmlRejection)) throw err;
    return { kind: err.kind, limit: err.ctx.limit, max: err.ctx.max };
  }
}

describe('src/lib/cot/xml: the attribute value limit in characters', () => {
  it('an attribute value of maxAttrValueLen emoji (twice as many code units, across read chunks) is read; one more is refused', () => {
    const value = EMOJI.repeat(LIMITS.maxAttrValueLen);
    expect(refusal(`<event remarks="${value}"/>`)).to.equal(null);
    expect(parseXml(`<event remarks="${value}"/>`, LIMITS).attrs[0]!.value).to.equal(value);
    expect(refusal(`<event remarks="${value}${EMOJI}"/>`)).to.deep.equal({ kind: 'limit', limit: 'maxAttrValueLen', max: LIMITS.maxAttrValueLen });
    // and in code units as before for the ASCII case
    expect(refusal(`<event remarks="${'x'.repeat(LIMITS.maxAttrValueLen + 1)}"/>`)).to.deep.equal({ kind: 'limit', limit: 'maxAttrValueLen', max: LIMITS.maxAttrValueLen });
  });
});
