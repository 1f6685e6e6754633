export { freePort } from '../../src/shared/free-port';
