import type { InvoiceReferenceMode } from '../config';

// Table of the modulo-10 recursive check digit used by Swiss payment slips (ISR and QR reference).
const CARRY_TABLE = [0, 9, 4, 6, 8, 2, 7, 1, 3, 5] as const;

/** The check digit over a string of decimal digits (modulo 10, recursive). */
export function mod10RecursiveCheckDigit(digits: string): number {
  if (!/^\d*$/.test(digits)) throw new Error('only decimal digits have a check digit');
  let carry = 0;
  for (const digit of digits) carry = CARRY_TABLE[(carry + Number(digit)) % 10];
  return (10 - carry) % 10;
}

/** True for a 27-digit QR reference whose last digit is the check digit of the first 26. */
export function isValidQrReference(reference: string): boolean {
  return /^\d{27}$/.test(reference) && mod10RecursiveCheckDigit(reference.slice(0, 26)) === Number(reference[26]);
}

/**
 * The QR reference of a payment: its number, zero-padded to 26 digits, plus the check digit. Payment numbers are
 * unique, so the reference identifies the payment when the bank reports it as paid.
 */
export function qrReferenceFor(paymentNumber: string): string {
  if (!/^\d{1,26}$/.test(paymentNumber)) throw new Error(`payment number ${paymentNumber} cannot become a QR reference`);
  const base = paymentNumber.padStart(26, '0');
  return `${base}${mod10RecursiveCheckDigit(base)}`;
}

export const QR_INVOICE_METHOD = 'INV';

export interface InvoiceReferenceInput {
  method: string;
  mode: InvoiceReferenceMode;
  /** The configured text, used in mode `text`. */
  text?: string;
  /** The donation purpose of the product, used in mode `purpose`. */
  purpose: string | null;
  paymentNumber: string;
}

/**
 * What the QR invoice of a payment carries as reference, or null for every method but `INV`. Without a text or
 * purpose to print, the QR reference is used: a QR invoice always needs a reference.
 */
export function invoiceReference({ method, mode, text, purpose, paymentNumber }: InvoiceReferenceInput): string | null {
  if (method !== QR_INVOICE_METHOD) return null;
  if (mode === 'text' && text) return text;
  if (mode === 'purpose' && purpose) return purpose;
  return qrReferenceFor(paymentNumber);
}
