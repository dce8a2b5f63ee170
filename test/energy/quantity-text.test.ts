import { expect } from 'chai';
import { MAX_DECIMALS, quantityText, roundedText } from '../../src/energy/quantity-text.js';

describe('src/energy/quantity-text: how the energy panel writes a quantity', () => {
  it('three significant digits, never more than two decimals; integers stay whole', () => {
    expect(roundedText(90.98944847500002)).to.equal('91.0');
    expect(roundedText(2.3006865178284004)).to.equal('2.30');
    expect(roundedText(129.70735493156)).to.equal('130');
    expect(roundedText(0.74)).to.equal('0.74');
    expect(roundedText(48213.7)).to.equal('48,214');
    expect(roundedText(480)).to.equal('480');
    expect(MAX_DECIMALS).to.equal(2);
  });

  it('small values take a metric prefix; kWh is written in Wh; utilisation in percent; PUE as a ratio', () => {
    expect(quantityText(0.00003602982081432222, 'kWh')).to.equal('36.0 mWh');
    expect(quantityText(0.017294313990874666, 'gCO2e')).to.equal('17.3 mgCO2e');
    expect(quantityText(0.000004, 'J/request')).to.equal('4 µJ/request');
    expect(quantityText(0.244285, 's')).to.equal('0.24 s');
    expect(quantityText(0.0123, 's')).to.equal('12.3 ms');
    expect(quantityText(2.435178795789474, 'J/request')).to.equal('2.44 J/request');
    expect(quantityText(480, 'gCO2e/kWh')).to.equal('480 gCO2e/kWh');
    expect(quantityText(0.14867509380949287, 'ratio', 'measured.cpu_utilization')).to.equal('14.9 %');
    expect(quantityText(0.023540065817656986, 'ratio', 'measured.event_loop_utilization')).to.equal('2.35 %');
    expect(quantityText(1, 'ratio', 'model.coefficients.pue')).to.equal('1 (ratio)');
    expect(quantityText(2, 'vCPU')).to.equal('2 vCPU');
    expect(quantityText(19, 'requests')).to.equal('19 requests');
    expect(quantityText(0, 'J')).to.equal('0 J');
    expect(quantityText(null, 'J')).to.equal('–');
  });
});
