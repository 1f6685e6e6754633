// The admin page: plain DOM, no framework, no build step. It only calls the staff-only admin API. This module starts
// it: each view wires its own forms and buttons, and the address says which view shows (router.js).

import { $ } from './dom.js';
import { followAddress, render, setAutoRefresh, setViews } from './router.js';
import { resumeSession, signOut } from './session.js';
import { renderEndpoint, setUpEndpointView } from './views/endpoint.js';
import { renderEvent } from './views/event.js';
import { renderEvents, setUpEventsView } from './views/events.js';
import { renderHealth } from './views/health.js';
import { enterSession, setUpLogin } from './views/login.js';
import { renderRecovery, setUpRecoveryView } from './views/recovery.js';
import { setUpTestEvent } from './views/test-event.js';

async function start() {
  setViews({ events: renderEvents, event: renderEvent, health: renderHealth, recovery: renderRecovery, endpoint: renderEndpoint });
  setUpLogin();
  setUpEventsView();
  setUpRecoveryView();
  setUpEndpointView();
  setUpTestEvent();
  $('#refresh').addEventListener('click', () => void render());
  $('#auto-refresh').addEventListener('change', (change) => setAutoRefresh(/** @type {HTMLInputElement} */ (change.currentTarget).checked));
  window.addEventListener('hashchange', () => {
    $('#flash').hidden = true;
    followAddress();
  });

  if (resumeSession()) {
    try {
      await enterSession();
    } catch {
      signOut();
    }
  }
  followAddress();
}

void start();
