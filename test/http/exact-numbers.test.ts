import { refuseNumbersThatLoseDigits } from '../../src/http/exact-numbers';

const refused = (json: string) => {
  try {
    refuseNumbersThatLoseDigits(json);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

test('numbers a double keeps as written pass, in any spelling', () => {
  for (const json of ['[0.1, 12.340, 1.5E3, 1.5e+3, 99999999999e-2, -0, 0.0, 5e-324, 9007199254740991, 1e21, -42.5]', '{"a":{"b":[1,2,3]}}', '[]']) {
    expect([json, refused(json)]).toEqual([json, undefined]);
  }
});

test('a number that would become another one is refused, naming it and what it would become', () => {
  expect(refused('{"amount":50.000000000000001}')).toBe(
    'The number 50.000000000000001 cannot be taken as written: a JSON number here keeps at most about 15 significant digits (it would become 50)',
  );
  for (const literal of ['0.010000000000000000001', '999999999.99000001', '9007199254740993', '1e400', '-1.00000000000000001E2']) {
    expect([literal, refused(`[1, ${literal}]`)]).toEqual([literal, expect.stringContaining(`The number ${literal} `)]);
  }
});

test('digits inside strings are text, however the string is escaped', () => {
  expect(refused('{"transaction_id":"50.000000000000001","note":"a \\"quoted\\" 1.00000000000000001 \\\\","n":1}')).toBeUndefined();
});
