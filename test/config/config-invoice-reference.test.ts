import { loadConfig } from '../../src/config';

test('QR invoices carry the QR reference unless the platform is configured otherwise', () => {
  expect(loadConfig({}).platform.invoiceReference).toEqual({ mode: 'qr', text: undefined });
  expect(
    loadConfig({ PLATFORM_INVOICE_REFERENCE_MODE: 'text', PLATFORM_INVOICE_REFERENCE_TEXT: 'Spende' }).platform.invoiceReference,
  ).toEqual({ mode: 'text', text: 'Spende' });
});

test('mode text without a text, or an unknown mode, does not start', () => {
  expect(() => loadConfig({ PLATFORM_INVOICE_REFERENCE_MODE: 'text' })).toThrow(/PLATFORM_INVOICE_REFERENCE_TEXT is required/);
  expect(() => loadConfig({ PLATFORM_INVOICE_REFERENCE_MODE: 'iban' })).toThrow(/PLATFORM_INVOICE_REFERENCE_MODE/);
});
