/** The payment environment of a contact, payment or order: test data never mixes with live data. */
export type Environment = 'TEST' | 'PRODUCTION';
