import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateDataset, serializeDataset, datasetSha256 } from '../../src/fleet/dataset/generate.js';
import { datasetPath, DatasetIntegrityError, loadDataset } from '../../src/fleet/dataset/load.js';
import { grossTonnage, imoCompanyCheckDigit, imoShipCheckDigit, isValidImoShip } from '../../src/fleet/dataset/identifiers.js';

describe('fleet dataset: seeded, committed, reproducible', () => {
  it('regenerating from seed 42 gives the committed file byte for byte', () => {
    const committed = readFileSync(datasetPath(), 'utf8');
    expect(serializeDataset(generateDataset(42)) === committed, 'run: npx tsx src/fleet/dataset/regenerate.ts').to.equal(true);
  });

  it('records the SHA-256 of its own canonical content, and another seed gives other data', () => {
    const ds = loadDataset();
    expect(ds.sha256).to.equal(datasetSha256(ds));
    expect(ds.synthetic).to.equal(true);
    expect(ds.seed).to.equal(42);
    expect(generateDataset(7).sha256).to.not.equal(ds.sha256);
  });

  it('a tampered file is refused at load', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-'));
    try {
      const path = join(dir, 'fleet-dataset.json');
      writeFileSync(path, readFileSync(datasetPath(), 'utf8').replace('"deadweight_t": ', '"deadweight_t": 1'));
      expect(() => loadDataset(path)).to.throw(DatasetIntegrityError, /does not match/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('identifier rules reproduce the published examples', () => {
    expect(imoShipCheckDigit('907472')).to.equal(9);
    expect(isValidImoShip('9074729')).to.equal(true);
    expect(isValidImoShip('9074728')).to.equal(false);
    expect(imoCompanyCheckDigit('204199')).to.equal(9);
    expect(grossTonnage(10000)).to.equal(2800);
  });

  it('has the sizes and the coverage cases the note asks for', () => {
    const ds = loadDataset();
    expect(ds.fleets).to.have.length(3);
    expect(ds.vessels).to.have.length(12);
    expect(ds.components).to.have.length(72);
    expect(ds.voyages).to.have.length(36);
    expect(ds.psc_inspections.some((p) => p.deficiencies.some((d) => d.action_codes.includes(30)))).to.equal(true);
    expect(ds.maintenance_logs.some((l) => l.linked_deficiency !== null)).to.equal(true);
  });
});
