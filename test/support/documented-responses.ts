import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Checks response bodies against the schema that the served OpenAPI document declares for that path, method
 * and status: the documentation cannot drift from what the API answers.
 */
export async function documentedResponses(baseUrl: string) {
  const document = (await (await fetch(`${baseUrl}/api/openapi.json`)).json()) as Record<string, unknown>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi');
  const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
  return {
    document,
    /** The validation errors (none when the body matches), for `expect(...).toEqual([])`. */
    errors(method: 'get' | 'post', pathTemplate: string, status: number, body: unknown) {
      const pointer = `openapi#/paths/${escape(pathTemplate)}/${method}/responses/${status}/content/application~1json/schema`;
      const validate = ajv.getSchema(pointer);
      if (!validate) return [`no documented schema at ${pointer}`];
      return validate(body) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
    },
  };
}

export type DocumentedResponses = Awaited<ReturnType<typeof documentedResponses>>;
