// Signing in: the form, and what the page fills in once it knows who is signed in.

import { $, showFormError } from '../dom.js';
import { ApiError } from '../http.js';
import { render } from '../router.js';
import { loadInfo, signedInInfo, signIn, signOut } from '../session.js';
import { fillEndpointChoices } from './endpoint.js';
import { fillEventFilters } from './events.js';
import { fillRecoveryChoices } from './recovery.js';
import { fillTestEventChoices } from './test-event.js';

const showLoginError = (/** @type {string} */ message) => showFormError('#login-error', message);

/** Who is signed in, and the server's choices in every form that offers them; a 401 or 403 throws. */
export async function enterSession() {
  await loadInfo();
  fillEventFilters();
  fillEndpointChoices();
  fillRecoveryChoices();
  fillTestEventChoices();
  $('#session-user').textContent = signedInInfo().username;
}

/** @param {SubmitEvent} submit */
async function onLogin(submit) {
  submit.preventDefault();
  const form = /** @type {HTMLFormElement} */ (submit.currentTarget);
  const username = form.username.value.trim();
  const password = form.password.value;
  if (!username || !password) return showLoginError('Benutzername und Passwort eingeben.');
  const button = $('button[type=submit]', HTMLButtonElement, form);
  button.disabled = true;
  showLoginError('');
  try {
    await signIn(username, password);
    await enterSession();
    form.reset();
    await render();
  } catch (err) {
    signOut();
    if (err instanceof ApiError && err.status === 401) showLoginError('Benutzername oder Passwort ist falsch.');
    else if (err instanceof ApiError && err.status === 403) showLoginError('Dieses Konto hat keine Staff-Berechtigung.');
    else if (err instanceof ApiError) showLoginError(`Anmeldung fehlgeschlagen: ${err.message}`);
    else showLoginError('Der Server ist nicht erreichbar.');
  } finally {
    button.disabled = false;
  }
}

export function setUpLogin() {
  $('#login-form').addEventListener('submit', (submit) => void onLogin(submit));
  $('#logout').addEventListener('click', () => {
    signOut();
    void render();
  });
}
