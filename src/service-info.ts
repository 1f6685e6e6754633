import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from './config';

const packageJson = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};

/** Name and version of this service, as package.json declares them (what subscribers see in the User-Agent). */
export const SERVICE_NAME = packageJson.name;
export const SERVICE_VERSION = packageJson.version;
