import { readFileSync } from 'node:fs';
import { codes as allCurrencyCodes } from 'currency-codes';
import { CURRENCIES_SINCE_THE_PACKAGED_LIST, currencyMinorUnits, isCurrencyCode, NON_CURRENCIES } from '../../src/shared/iso-codes';

/** The entries of ISO 4217 list one as the package ships it (the XML it builds its data from). */
function publishedListOne(): Array<{ code: string; minorUnits: string; isFund: boolean }> {
  const xml = readFileSync(require.resolve('currency-codes/iso-4217-list-one.xml'), 'utf8');
  return [...xml.matchAll(/<CcyNtry>([\s\S]*?)<\/CcyNtry>/g)].flatMap(([, entry]) => {
    const code = /<Ccy>(\w{3})<\/Ccy>/.exec(entry)?.[1];
    if (!code) return []; // Antarctica: "No universal currency"
    return [{ code, minorUnits: /<CcyMnrUnts>([^<]*)</.exec(entry)![1], isFund: /<CcyNm IsFund="true">/.test(entry) }];
  });
}

describe('currencies', () => {
  test('the non-currencies are what list one marks: no minor unit, or a fund; and UYW, an index unit', () => {
    const marked = new Set(
      publishedListOne()
        .filter(({ minorUnits, isFund }) => minorUnits === 'N.A.' || isFund)
        .map(({ code }) => code),
    );
    expect([...NON_CURRENCIES].sort()).toEqual([...marked, 'UYW'].sort());
  });

  test('every other code of the list is a currency, with the minor units the list gives it', () => {
    for (const { code, minorUnits } of publishedListOne()) {
      if (NON_CURRENCIES.has(code)) {
        expect([code, isCurrencyCode(code), currencyMinorUnits(code)]).toEqual([code, false, undefined]);
      } else {
        expect([code, isCurrencyCode(code), currencyMinorUnits(code)]).toEqual([code, true, Number(minorUnits)]);
      }
    }
    expect(allCurrencyCodes().filter(isCurrencyCode)).toHaveLength(allCurrencyCodes().length - NON_CURRENCIES.size);
  });

  test('currencies added to ISO 4217 after the packaged list: XCG (2025), until the package lists them', () => {
    expect([isCurrencyCode('XCG'), currencyMinorUnits('XCG'), isCurrencyCode('ANG')]).toEqual([true, 2, true]);
    const packaged = new Set(publishedListOne().map(({ code }) => code));
    expect([...CURRENCIES_SINCE_THE_PACKAGED_LIST.keys()].filter((code) => packaged.has(code))).toEqual([]);
  });

  test('known minor units: yen and won none, franc and euro two, the dinars three', () => {
    expect(['JPY', 'KRW', 'CHF', 'EUR', 'USD', 'KWD', 'BHD', 'TND'].map(currencyMinorUnits)).toEqual([0, 0, 2, 2, 2, 3, 3, 3]);
    expect(['XXX', 'XTS', 'XAU', 'XDR', 'CHE', 'chf', 'CHF ', ''].map(isCurrencyCode)).toEqual(Array(8).fill(false));
  });
});
