import {
  invoiceReference,
  isValidQrReference,
  mod10RecursiveCheckDigit,
  qrReferenceFor,
} from '../../src/platform/invoice-reference';

test('the check digit of published QR and ISR references is reproduced', () => {
  // The example reference of the Swiss QR-bill implementation guidelines, and an ISR example.
  expect(mod10RecursiveCheckDigit('21000000000313947143000901')).toBe(7);
  expect(mod10RecursiveCheckDigit('12000000000023447894321689')).toBe(9);
  expect(isValidQrReference('210000000003139471430009017')).toBe(true);
  expect(isValidQrReference('120000000000234478943216899')).toBe(true);
});

test('a wrong check digit, a wrong length or a non-digit is not a valid QR reference', () => {
  expect(isValidQrReference('210000000003139471430009018')).toBe(false);
  expect(isValidQrReference('21000000000313947143000901')).toBe(false);
  expect(isValidQrReference('21000000000313947143000901A')).toBe(false);
});

test('a payment number becomes a valid 27-digit QR reference', () => {
  const reference = qrReferenceFor('1000001');
  expect(reference).toHaveLength(27);
  expect(reference.slice(0, 26)).toBe(`${'0'.repeat(19)}1000001`);
  expect(isValidQrReference(reference)).toBe(true);
  for (const number of ['1', '999999', '1000002', '123456789012']) {
    expect(isValidQrReference(qrReferenceFor(number))).toBe(true);
  }
});

test('only INV payments carry an invoice reference, per configured mode', () => {
  const base = { purpose: 'Wasser für Alle', paymentNumber: '1000001' };
  expect(invoiceReference({ ...base, method: 'TWI', mode: 'qr' })).toBeNull();
  expect(invoiceReference({ ...base, method: 'VIS', mode: 'text', text: 'Spende' })).toBeNull();
  expect(invoiceReference({ ...base, method: 'INV', mode: 'qr' })).toBe(qrReferenceFor('1000001'));
  expect(invoiceReference({ ...base, method: 'INV', mode: 'text', text: 'Spende Frühling' })).toBe('Spende Frühling');
  expect(invoiceReference({ ...base, method: 'INV', mode: 'purpose' })).toBe('Wasser für Alle');
  // Without a purpose to print the invoice still needs a reference.
  expect(invoiceReference({ ...base, purpose: null, method: 'INV', mode: 'purpose' })).toBe(qrReferenceFor('1000001'));
});
