/** Sources cited by the fleet views, in the shared `sources` shape; a comment's [Sn] is a key here. */

export type SourceKey = keyof typeof FLEET_SOURCES;

const src = (leader: string, kind: string, url: string, data_kind = 'standard') => ({ leader, kind, url, data_kind });

export const FLEET_SOURCES = {
  S1: src('IMO ship number check digit (worked examples)', 'identifier_rule', 'https://tarkistusmerkit.teppovuori.fi/coden.htm'),
  S2: src('IMO ship and company number check digits (IMO Res. A.1117(30))', 'identifier_rule', 'https://tickerdossier.com/wiki/imo-ship-identification-number'),
  S3: src('ITU-R M.585 ship station identity', 'identifier_rule', 'https://jordanbell.info/blog/2023/05/28/ITU-R-M.585.html'),
  S4: src('USCG MMSI formats, MID range 201-775', 'identifier_rule', 'https://navcen.uscg.gov/mmsi-formats'),
  S5: src('Maritime identification digits (ITU MID table)', 'code_list', 'https://en.wikipedia.org/wiki/Maritime_identification_digits'),
  S6: src('AIS ship type identifiers (ITU-R M.1371)', 'code_list', 'https://imorules.com/GUID-4AF512F5-1714-491A-858D-456C752CC12E.html'),
  S8: src('Gross tonnage, Tonnage Convention 1969 Annex I reg. 3', 'regulation', 'https://tickerdossier.com/wiki/gross-ton'),
  S10: src('Harmonized System of Survey and Certification', 'regulation', 'https://marinegyaan.com/what-does-the-harmonized-system-provides/'),
  S11: src('ISM DOC validity and annual verification', 'regulation', 'https://shipinspection.eu/what-is-the-maximum-period-of-validity-of-the-document-of-compliance/'),
  S12: src('ISM SMC intermediate verification', 'regulation', 'https://marinegyaan.com/what-is-intermediate-verification-of-safety-management-certificates/'),
  S13: src('ISM certificates overview', 'regulation', 'https://www.handybulk.com/four-ism-code-certificates'),
  S14: src('ISPS Code A/19 verification and certification', 'regulation', 'https://www.imorules.com/GUID-5D939A23-8D67-4485-A06F-4867293999C4.html'),
  S15: src('MLC 2006 intermediate inspection window', 'regulation', 'https://www.tinn.ir/Section-english-2/34589-first-intermediate-inspection-to-comply-with-mlc'),
  S18: src('PSC manual: nature of deficiency, certificates, action taken', 'code_list', 'http://www.bsmou.org/psc-manual-rev-19/3/'),
  S19: src('Tokyo MoU deficiency code lineage', 'code_list', 'https://www.scribd.com/document/488704714/LIST-OF-CODES-FOR-DEFICIENCIES-TOKYO-MOU-doc'),
  S20: src('2011 harmonized deficiency code structure', 'code_list', 'https://ombros-consulting.com/?p=1004'),
  S21: src('PSC action-taken codes', 'code_list', 'https://www.jahajee.com/Action-codes-to-psc/'),
  S23: src('IMO detention criteria (Procedures for PSC)', 'regulation', 'https://imorules.com/GUID-0DE76EF0-0C74-4F4B-A856-72C2C6DFBF65.html'),
  S24: src('PMS accepted in lieu of surveys', 'practice', 'https://azpdf.net/in/article/planned-maintenance-system.10779560', 'reference'),
  S25: src('Running-hour overhaul intervals', 'practice', 'http://gta.gastechnology.org/engine_drive/ed_eq_a7', 'reference'),
  S26: src('Weibull conditional reliability', 'method', 'https://www.reliawiki.com/index.php?direction=prev&oldid=24644&title=Template%3AWeibull_conditional_reliability_function', 'method'),
  S27: src('Banjevic, Remaining useful life in theory and practice, Metrika 69 (2009)', 'method', 'https://id.scribd.com/document/389109233/Remaining-Useful-Life-in-Theory-and-Prac', 'method'),
  S28: src('CII formulas, Z factors and ship-type boundaries (MEPC.336-339(76), 353/354(78), 364(79))', 'regulation', 'https://staging.shipcalculators.com/docs/formulas/shiptype-crude-tanker'),
  S29: src('CII basis and A-E bands', 'regulation', 'https://emissions.balticexchange.com/en/carbon-emissions1.html'),
  S30: src('Paris MoU NIR inspection intervals', 'regulation', 'https://en.portnews.ru/news/16850'),
  S31: src('Paris MoU NIR ship risk profile', 'regulation', 'https://www.ukpandi.com/news-and-resources/bulletins/2010/732-1210-new-inspection-regime-paris-mou/'),
  S33: src('US sanctions advisory for the maritime industry (May 2020)', 'advisory', 'https://www.e-ports.com/regulations/0e7900f6b5f7498cbee868725375c377', 'reference'),
  S34: src('JWLA-032 listed areas', 'listing', 'http://latitudebrokers.com/joint-war-committee-updates-war-listed-areas-on-18th-december-2023/', 'reference'),
  S35: src('Joint War Committee', 'listing', 'https://www.lmalloyds.com/jointwar', 'reference'),
  S37: src('UKMTO BMP and Voluntary Reporting Area', 'guidance', 'https://www.ukmto.org/indian-ocean/best-management-practices/introduction', 'reference'),
  S38: src('Load Line Annex II zones, areas and seasonal periods', 'regulation', 'https://sso.agc.gov.sg/SL/MSA1995-RG5?DocDate=20151228&ProvIds=SxII-'),
  S65: src('BMP High Risk Area and its withdrawal from 1 Jan 2023', 'guidance', 'https://www.intercargo.org/best-management-practices-bmp/', 'reference'),
} as const;
