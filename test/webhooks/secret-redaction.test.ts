import { classifyExchange, RESPONSE_BODY_LIMIT_BYTES, withoutSecrets } from '../../src/webhooks/delivery-outcome';
import { base64Forms, redactionNeedles } from '../../src/webhooks/secret-redaction';
import { spellingsOf } from '../support/secret-spellings';

const PASSWORD = 'Pässwort "mit" Leer/zeichen & 1+1';
const HEADER = Buffer.from(`crm:${PASSWORD}`, 'utf8').toString('base64');
const SECRET = `whsec_${Buffer.from('a signing key of thirty-two byte').toString('base64')}`;
const SECRETS = [HEADER, PASSWORD, SECRET, SECRET.slice('whsec_'.length)];
const NEEDLES = redactionNeedles(SECRETS);

const redacted = (body: string, secrets: readonly string[] = SECRETS) =>
  withoutSecrets({ outcome: 'failed', responseCode: 400, responseBody: body, error: null }, redactionNeedles(secrets)).responseBody;

describe('every spelling of each credential is cut out', () => {
  for (const [name, secret] of Object.entries({ password: PASSWORD, 'basic header value': HEADER, 'signing secret': SECRET })) {
    test(name, () => {
      for (const [form, spelling] of Object.entries(spellingsOf(secret))) {
        expect([form, redacted(`echo: [${spelling}] end`)]).toEqual([form, 'echo: [[redacted]] end']);
      }
    });
  }

  test('the base64 of the password inside a longer base64 text, at each of the three offsets', () => {
    for (const prefix of ['', 'x', 'xy', 'Authorization: Basic ']) {
      const dump = Buffer.from(`${prefix}${PASSWORD} and more`, 'utf8').toString('base64');
      expect([prefix, redacted(dump)]).toEqual([prefix, expect.stringContaining('[redacted]')]);
      const left = redacted(dump)!.replace('[redacted]', '');
      // What is left decodes to no more than two characters of the password around the cut.
      expect(Buffer.from(left, 'base64').toString('utf8')).not.toContain(PASSWORD.slice(1, -1));
    }
    expect(base64Forms('abcdef')).toContain('YWJjZGVm');
  });

  test('a mix of spellings within one echo, and several echoes, are all cut', () => {
    const mixed = `${encodeURIComponent('Pässwort ')}\\"mit\\" Leer\\/zeichen &amp; 1 1`;
    expect(redacted(`a=${mixed}&b=${PASSWORD.toUpperCase()}&c=${HEADER}`)).toBe('a=[redacted]&b=[redacted]&c=[redacted]');
  });
});

describe('nothing else is touched', () => {
  test('an answer without credentials stays byte for byte, encodings and all', () => {
    const body = '{"error":"Pässwort falsch","hint":"%20%C3%A4 \\u00e4 &amp; &#228; +","b64":"cGFzc3dvcmQ="}';
    expect(redacted(body)).toBe(body);
  });

  test('secrets shorter than 6 characters are not searched for', () => {
    expect(redacted('the answer is 42, abcde', ['abcde'])).toBe('the answer is 42, abcde');
  });

  test('a password that itself holds %41 or \\n is found as it stands', () => {
    for (const password of ['pass%41word', 'pass\\nword', 'pass&amp;word']) {
      expect([password, redacted(`got ${password}!`, [password])]).toEqual([password, 'got [redacted]!']);
    }
  });

  test('text around a cut keeps its encodings; overlapping finds are cut once', () => {
    expect(redacted(`%20${encodeURIComponent(PASSWORD)}%20`)).toBe('%20[redacted]%20');
    expect(redacted(`${PASSWORD}${PASSWORD}`)).toBe('[redacted]');
  });

  test('the error text is redacted too (a redirect’s Location may carry the password)', () => {
    const outcome = withoutSecrets(
      { outcome: 'failed', responseCode: 302, responseBody: null, error: `Redirect not followed (Location: /login?pw=${encodeURIComponent(PASSWORD)})` },
      NEEDLES,
    );
    expect(outcome.error).toBe('Redirect not followed (Location: /login?pw=[redacted])');
  });

  test('what is left of a secret where the 16 KiB of a stored answer end is cut out too', () => {
    for (const [form, spelling] of Object.entries(spellingsOf(PASSWORD))) {
      const bytes = Buffer.from(spelling, 'utf8');
      // The limit falls in the middle of the spelling: its first half is stored, the rest was never read.
      const filler = 'x'.repeat(RESPONSE_BODY_LIMIT_BYTES - Math.floor(bytes.length / 2));
      const outcome = classifyExchange({ kind: 'response', status: 500, body: Buffer.concat([Buffer.from(filler), bytes]), complete: false });
      const { responseBody } = withoutSecrets(outcome, NEEDLES, { bodyCut: true });
      expect([form, responseBody!.replace(filler, '<filler>')]).toEqual([form, '<filler>[redacted]']);
    }
  });

  test('what is left of a secret where an error text is cut after 1000 characters is cut out too', () => {
    for (const cutAfter of [3, 10, PASSWORD.length - 1]) {
      const location = `/login?x=${'a'.repeat(1000 - 'Redirect not followed (Location: /login?x='.length - cutAfter)}${PASSWORD}`;
      const { error } = withoutSecrets(classifyExchange({ kind: 'response', status: 302, location, body: Buffer.alloc(0), complete: true }), NEEDLES);
      expect([cutAfter, error!.slice(-14)]).toEqual([cutAfter, 'aaa[redacted]…']);
    }
  });

  test('the end of an answer that arrived whole is left as it is, even where a secret could start', () => {
    expect(redacted(`the password begins with ${PASSWORD.slice(0, 4)}`)).toBe(`the password begins with ${PASSWORD.slice(0, 4)}`);
  });
});
