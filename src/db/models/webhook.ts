export type PayloadVersion = 'v1' | 'v2' | 'v2.1';
