// Hark's companion page: pairing, the chat (typed and push-to-talk turns), pictures as they are taken and
// the light, kept live by the appliance's event stream. The API is docs/server-api.md; how the page uses it
// is docs/web.md.

import { APIError, MESSAGE_VERSION, authorizedBlobURL, forgetToken, keepToken, request, socketURL, storedToken } from './api.js';
import { EventStream } from './events.js';
import { PushToTalk, microphoneAvailability } from './talk.js';
import { RoomsPanel } from './rooms.js';

const SPEAK_KEY = 'hark.speakTypedReplies';
const CONTEXT_KEY = 'hark.context';
const ERROR_SHOWN_MS = 12000;

const $ = (id) => document.getElementById(id);

const ui = {
  login: $('login'), loginNotice: $('login-notice'), loginError: $('login-error'),
  pairForm: $('pair-form'), pairCode: $('pair-code'), loginForm: $('login-form'),
  app: $('app'), connection: $('connection'), connectionText: $('connection-text'),
  light: $('light'), lightText: $('light-text'), capture: $('capture'), speak: $('speak'), logout: $('logout'),
  messages: $('messages'), error: $('error'), messageForm: $('message-form'), message: $('message'),
  mic: $('mic'), micStatus: $('mic-status'),
};

const session = {
  token: null,
  context: null, // the Watson context, carried from each response into the next message
  light: 'unknown',
  pictures: new Set(), // picture ids already in the chat (events replay, the camera button answers too)
  turns: Promise.resolve(), // typed turns run one after another, so each gets the previous context
  events: null,
  talk: null,
  voice: null, // the bubbles of the voice turn in progress
  rooms: null, // the drop-in rooms panel (web/rooms.js)
};

// --- small helpers --------------------------------------------------------------------------------------

function clock(date) {
  return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function icon(name) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('aria-hidden', 'true');
  const use = document.createElementNS('http://www.w3.org/2000/svg', 'use');
  use.setAttribute('href', `#icon-${name}`);
  svg.append(use);
  return svg;
}

let errorTimer = null;

/** Shows an error where the user is looking: the login card or the banner above the composer. */
function showError(error) {
  const text = error instanceof APIError ? error.advice : error?.message ?? String(error);
  if (!ui.login.hidden) {
    ui.loginError.textContent = text;
    ui.loginError.hidden = false;
    return;
  }
  ui.error.textContent = text;
  ui.error.hidden = false;
  clearTimeout(errorTimer);
  errorTimer = setTimeout(() => { ui.error.hidden = true; }, ERROR_SHOWN_MS);
}

function clearError() {
  ui.error.hidden = true;
  ui.loginError.hidden = true;
}

/** A request with the session's token; a 401 anywhere ends the session. */
function api(path, options = {}) {
  return request(path, { ...options, token: session.token, onUnauthorized: (error) => endSession(`Signed out: ${error.message}.`) });
}

// --- the conversation -----------------------------------------------------------------------------------

/**
 * Adds a bubble. `who` is "you", "hark" or "system". Returns a handle to change it later (live transcripts,
 * failures, pictures).
 */
function addMessage(who, { text = '', time = new Date(), pending = false } = {}) {
  const item = element('li', `message ${who}`);
  const bubble = element('div', 'bubble');
  const body = element('p', 'text', text);
  bubble.append(body);
  const meta = element('div', 'meta');
  const label = who === 'you' ? 'you' : who === 'hark' ? 'Hark' : 'note';
  meta.append(element('span', 'who', label));
  const stamp = element('time', '', clock(time));
  stamp.dateTime = time.toISOString();
  meta.append(stamp);
  item.append(bubble, meta);
  item.classList.toggle('pending', pending);
  ui.messages.append(item);
  item.scrollIntoView({ block: 'end', behavior: 'smooth' });
  return {
    item,
    bubble,
    setText(value, { stillPending = false } = {}) {
      body.textContent = value;
      item.classList.toggle('pending', stillPending);
    },
    fail(value) {
      if (value) body.textContent = value;
      item.classList.remove('pending');
      item.classList.add('failed');
    },
    remove() { item.remove(); },
    append(node) {
      bubble.append(node);
      item.scrollIntoView({ block: 'end', behavior: 'smooth' });
    },
  };
}

/** The reply texts of a Watson response: `output.generic` text items, else `output.text`. */
function replyTexts(response) {
  const output = response?.output ?? {};
  const generic = Array.isArray(output.generic) ? output.generic : [];
  const texts = generic.filter((item) => item?.response_type === 'text' && typeof item.text === 'string').map((item) => item.text);
  if (texts.length > 0) return texts;
  return (Array.isArray(output.text) ? output.text : []).filter((text) => typeof text === 'string' && text !== '');
}

/** Puts a Watson response into a Hark bubble: text, options as buttons, same-origin images; warnings as notes. */
function renderResponse(response, message = addMessage('hark')) {
  const texts = replyTexts(response);
  message.setText(texts.length ? texts.join('\n') : '(no reply)');
  for (const item of response?.output?.generic ?? []) {
    if (item?.response_type === 'option' && Array.isArray(item.options)) {
      const options = element('div', 'options');
      if (item.title) message.append(element('p', 'text', item.title));
      for (const option of item.options) {
        const text = option?.value?.input?.text;
        if (typeof text !== 'string') continue;
        const button = element('button', '', option.label ?? text);
        button.type = 'button';
        button.addEventListener('click', () => sendText(text));
        options.append(button);
      }
      message.append(options);
    } else if (item?.response_type === 'image' && typeof item.source === 'string') {
      const url = new URL(item.source, location.href);
      if (url.origin === location.origin) message.append(picture(authorizedBlobURL(item.source, session.token), item.title ?? 'Image', item.description));
      else message.append(element('p', 'text', `[image: ${item.title ?? item.source}]`)); // never fetched from elsewhere
    }
  }
  for (const log of response?.output?.log_messages ?? []) {
    if ((log?.level === 'error' || log?.level === 'warn') && log.msg) addMessage('system', { text: `${log.level}: ${log.msg}` });
  }
  return message;
}

/** A figure for a picture whose `blob:` URL `source` (a promise, see `authorizedBlobURL`) will give. */
function picture(source, alt, caption) {
  const figure = element('figure');
  const image = element('img');
  image.alt = alt;
  image.loading = 'eager';
  image.decoding = 'async';
  const failed = () => figure.replaceChildren(element('p', 'text', `${alt} could not be loaded.`));
  image.addEventListener('error', failed);
  const link = element('a');
  link.target = '_blank';
  link.rel = 'noopener';
  source.then((url) => {
    if (!url) return failed();
    image.src = url;
    link.href = url;
  }, failed);
  link.append(image);
  figure.append(link);
  if (caption) figure.append(element('figcaption', '', caption));
  return figure;
}

/** A picture the appliance took, once per id, whatever told us (event, replay, the camera button). */
function showPicture({ id, time, trigger, text }) {
  if (id === undefined || id === null || session.pictures.has(id)) return;
  session.pictures.add(id);
  const when = time ? new Date(time) : new Date();
  const message = addMessage('hark', { text: text ?? 'Picture taken', time: when });
  const source = authorizedBlobURL(`/api/pictures/${encodeURIComponent(id)}`, session.token);
  const description = `Picture ${id}${trigger ? ` (${trigger})` : ''}, taken at ${clock(when)}`;
  const figure = picture(source, description);
  figure.querySelector('img').dataset.picture = String(id);
  message.append(figure);
}

function remember(context) {
  if (!context || typeof context !== 'object') return;
  session.context = context;
  sessionStorage.setItem(CONTEXT_KEY, JSON.stringify(context));
}

/** One typed turn: the "you" bubble, the message API call with the carried context, the reply bubble. */
function sendText(text) {
  const mine = addMessage('you', { text });
  session.turns = session.turns.then(async () => {
    const thinking = addMessage('hark', { text: '…', pending: true });
    try {
      const body = { input: { text } };
      if (session.context) body.context = session.context;
      const response = await api(`/v1/workspaces/default/message?version=${MESSAGE_VERSION}`, { method: 'POST', body });
      remember(response?.context);
      renderResponse(response, thinking);
      if (response?.output?.actions?.length) refreshDevices().catch(() => {}); // in case the event stream is down
      if (ui.speak.getAttribute('aria-pressed') === 'true') speak(replyTexts(response).join(' '));
    } catch (error) {
      thinking.remove();
      mine.fail();
      if (session.token) showError(error);
    }
  });
  return session.turns;
}

/** Asks the appliance to say `text` aloud (the "speak typed replies" switch). */
async function speak(text) {
  if (!text) return;
  try {
    await api('/api/say', { method: 'POST', body: { text } });
  } catch (error) {
    showError(error);
  }
}

// --- devices ---------------------------------------------------------------------------------------------

function setLight(state) {
  session.light = state === 'on' || state === 'off' ? state : 'unknown';
  const known = session.light !== 'unknown';
  ui.light.dataset.state = session.light;
  ui.light.disabled = !known;
  ui.light.setAttribute('aria-checked', String(session.light === 'on'));
  ui.lightText.textContent = known ? `Light ${session.light}` : 'Light ?';
  ui.light.title = `Light: ${session.light}${known ? ` (switch ${session.light === 'on' ? 'off' : 'on'})` : ''}`;
}

async function refreshDevices() {
  const answer = await api('/api/devices');
  const devices = Array.isArray(answer?.devices) ? answer.devices : [];
  const light = devices.find((device) => device?.name === 'light');
  setLight(light?.state);
  ui.light.hidden = !light;
  ui.capture.hidden = !devices.some((device) => device?.kind === 'camera');
}

async function switchLight() {
  const command = session.light === 'on' ? 'off' : 'on';
  ui.light.disabled = true;
  try {
    const answer = await api('/api/devices/light', { method: 'POST', body: { command } });
    setLight(answer?.state);
  } catch (error) {
    setLight(session.light);
    showError(error);
  }
}

async function capturePicture() {
  ui.capture.disabled = true;
  try {
    const taken = await api('/api/devices/camera', { method: 'POST', body: { command: 'capture' } });
    showPicture({ ...taken, text: 'Picture taken' });
  } catch (error) {
    showError(error);
  } finally {
    ui.capture.disabled = false;
  }
}

// --- the event stream --------------------------------------------------------------------------------------

function onEvent(event) {
  switch (event?.kind) {
    case 'device':
      if (event.name === 'light') setLight(event.state);
      break;
    case 'picture':
      showPicture({ id: event.picture, time: event.time, trigger: event.trigger, text: event.text });
      break;
    case 'error':
      if (event.text) addMessage('system', { text: `Appliance: ${event.text}`, time: new Date(event.time ?? Date.now()) });
      break;
    default:
      break; // transcripts and replies of this page's own turns are already in the chat
  }
}

function showConnection(state, detail = {}) {
  ui.connection.dataset.state = state;
  const words = {
    connecting: 'Connecting…',
    live: 'Live',
    reconnecting: detail.retryIn ? `Reconnecting in ${Math.ceil(detail.retryIn / 1000)} s` : 'Reconnecting…',
    offline: 'Offline',
  };
  ui.connectionText.textContent = words[state] ?? state;
  ui.connection.title = `Event stream: ${words[state] ?? state}`;
}

// --- push-to-talk -------------------------------------------------------------------------------------------

function micState(state) {
  const recording = state === 'starting' || state === 'recording';
  ui.mic.setAttribute('aria-pressed', String(recording));
  ui.mic.dataset.state = state === 'waiting' ? 'busy' : state;
  ui.mic.setAttribute('aria-label', recording ? 'Release to send' : 'Hold to talk');
  const words = { idle: 'Hold to talk', starting: 'Starting the microphone…', recording: 'Listening… release to send', waiting: 'Thinking…' };
  ui.micStatus.textContent = words[state] ?? '';
  if (state === 'starting') {
    session.voice = { mine: addMessage('you', { text: 'Listening…', pending: true }), heard: false };
  }
}

function setUpTalk() {
  const unavailable = microphoneAvailability();
  if (unavailable) {
    ui.mic.disabled = true;
    ui.mic.title = unavailable;
    ui.micStatus.textContent = unavailable;
  }
  session.talk = new PushToTalk({
    socketURL: () => socketURL('/api/listen', session.token),
    conversation: () => session.context,
    onState: micState,
    onPartial(text) {
      if (text) session.voice?.mine.setText(text, { stillPending: true });
    },
    onTranscript(message) {
      const voice = session.voice;
      if (!voice) return;
      voice.heard = true;
      const text = typeof message.text === 'string' ? message.text : '';
      if (text && message.accepted !== false) voice.mine.setText(text);
      else voice.mine.fail(text ? `${text} (not sure I heard that right)` : message.reason ? `(nothing heard: ${message.reason})` : '(nothing heard)');
      voice.mine.item.dataset.confidence = String(message.acoustic_confidence ?? '');
    },
    onReply(message) {
      const voice = session.voice ?? (session.voice = { heard: true });
      remember(message.response?.context);
      if (message.response) voice.reply = renderResponse(message.response);
      else voice.reply = addMessage('hark', { text: message.text ?? '' });
      if (message.text && replyTexts(message.response).length === 0) voice.reply.setText(message.text);
      if (message.response?.output?.actions?.length) refreshDevices().catch(() => {});
    },
    onAudio(wav) {
      const voice = session.voice;
      session.voice = null;
      playReply(wav, voice?.reply);
    },
    onError(error) {
      const voice = session.voice;
      session.voice = null;
      if (voice && !voice.heard) voice.mine.remove();
      if (session.token) {
        showError(error);
        if (error.code === 'closed') refreshDevices().catch(() => {}); // a refused socket may be an expired token: 401 signs out
      }
    },
    onTooShort() {
      session.voice?.mine.remove();
      session.voice = null;
      ui.micStatus.textContent = 'Keep holding the button while you speak.';
    },
  });

  ui.mic.addEventListener('pointerdown', (event) => {
    if (event.button !== 0 || ui.mic.disabled) return;
    event.preventDefault();
    try {
      ui.mic.setPointerCapture(event.pointerId); // the release counts wherever the finger or mouse ends up
    } catch {
      // a synthetic pointer (assistive technology) cannot be captured; pointerup still ends the press
    }
    session.talk.press();
  });
  const up = () => session.talk.release();
  ui.mic.addEventListener('pointerup', up);
  ui.mic.addEventListener('pointercancel', up);
  ui.mic.addEventListener('lostpointercapture', up);
  ui.mic.addEventListener('contextmenu', (event) => event.preventDefault());

  // The space bar talks too, unless the focus is somewhere a space means something else.
  let spaceDown = false;
  document.addEventListener('keydown', (event) => {
    if (event.code !== 'Space' || ui.app.hidden || ui.mic.disabled) return;
    const target = event.target;
    if (target !== ui.mic && target instanceof Element && target.closest('input, textarea, select, button, a, summary, [contenteditable]')) return;
    event.preventDefault();
    if (event.repeat || spaceDown) return;
    spaceDown = true;
    session.talk.press();
  });
  document.addEventListener('keyup', (event) => {
    if (event.code !== 'Space' || !spaceDown) return;
    event.preventDefault();
    spaceDown = false;
    session.talk.release();
  });
  addEventListener('blur', () => {
    if (spaceDown) {
      spaceDown = false;
      session.talk.release();
    }
  });
}

function playReply(wav, message) {
  const url = URL.createObjectURL(new Blob([wav], { type: 'audio/wav' }));
  const audio = new Audio(url);
  const target = message ?? addMessage('hark', { text: '(spoken reply)' });
  const replay = element('button', 'replay');
  replay.type = 'button';
  replay.append(icon('play'), element('span', '', 'Play'));
  replay.setAttribute('aria-label', 'Play the spoken reply');
  replay.addEventListener('click', () => {
    audio.currentTime = 0;
    audio.play().catch((error) => showError(new Error(`The reply cannot be played: ${error.message}`)));
  });
  target.append(replay);
  target.item.dataset.audio = 'received';
  audio.play().then(() => { target.item.dataset.audio = 'played'; }, () => { target.item.dataset.audio = 'blocked'; });
}

// --- session ----------------------------------------------------------------------------------------------

function startSession(token) {
  session.token = token;
  try {
    session.context = JSON.parse(sessionStorage.getItem(CONTEXT_KEY) ?? 'null');
  } catch {
    session.context = null;
  }
  clearError();
  ui.login.hidden = true;
  ui.app.hidden = false;
  ui.message.focus();
  session.events = new EventStream({
    url: (since) => socketURL('/api/events', session.token, since === null ? {} : { since }),
    onEvent,
    onState: showConnection,
    async beforeRetry() {
      try {
        await refreshDevices(); // also catches up the light after an outage
        return true;
      } catch (error) {
        return !(error instanceof APIError && error.status === 401);
      }
    },
  });
  session.events.start();
  refreshDevices().catch((error) => { if (session.token) showError(error); });
  if (!session.context) startConversation();
}

/**
 * A new conversation begins with an empty message, as Watson's clients do: the dialog's welcome
 * (`conversation_start`) answers it and its context carries every later turn. Sent with the first user
 * text instead, the welcome would answer that text.
 */
function startConversation() {
  session.turns = session.turns.then(async () => {
    try {
      const response = await api(`/v1/workspaces/default/message?version=${MESSAGE_VERSION}`, { method: 'POST', body: {} });
      remember(response?.context);
      const thinking = addMessage('hark', { text: '…', pending: true });
      renderResponse(response, thinking);
    } catch (error) {
      if (session.token) showError(error);
    }
  });
}

/** Back to the login screen: on logout, and whenever the appliance answers 401. */
function endSession(notice) {
  if (!session.token && !ui.login.hidden) return;
  session.token = null;
  forgetToken();
  session.talk?.cancel();
  session.rooms?.reset();
  session.events?.stop();
  session.events = null;
  session.context = null;
  session.voice = null;
  session.pictures.clear();
  sessionStorage.removeItem(CONTEXT_KEY);
  for (const item of [...ui.messages.querySelectorAll('.message')]) item.remove();
  setLight('unknown');
  ui.app.hidden = true;
  ui.login.hidden = false;
  ui.loginError.hidden = true;
  ui.loginNotice.textContent = notice ?? '';
  ui.loginNotice.hidden = !notice;
  ui.pairCode.value = '';
  ui.pairCode.focus();
}

async function signIn(path, body, form) {
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  ui.loginError.hidden = true;
  try {
    const answer = await request(path, { method: 'POST', body });
    if (typeof answer?.token !== 'string') throw new APIError(200, 'bad_response', 'The appliance did not send a token.');
    keepToken(answer.token, answer.expires);
    ui.loginNotice.hidden = true;
    startSession(answer.token);
  } catch (error) {
    showError(error);
  } finally {
    button.disabled = false;
  }
}

function setUpLogin() {
  ui.pairForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const code = ui.pairCode.value.replace(/\s+/g, '');
    if (!/^\d{6}$/.test(code)) {
      showError(new Error('The pairing code is six digits.'));
      ui.pairCode.focus();
      return;
    }
    signIn('/api/pair', { code }, ui.pairForm);
  });
  ui.pairCode.addEventListener('input', () => {
    ui.pairCode.value = ui.pairCode.value.replace(/\D/g, '').slice(0, 6);
  });
  ui.loginForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const user = ui.loginForm.elements.user.value.trim();
    const password = ui.loginForm.elements.password.value;
    if (!user || !password) {
      showError(new Error('Enter a user name and a password.'));
      return;
    }
    signIn('/api/login', { user, password }, ui.loginForm);
  });
}

function setUpChat() {
  ui.messageForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = ui.message.value.trim();
    if (!text) return;
    ui.message.value = '';
    sendText(text);
  });
  ui.light.addEventListener('click', switchLight);
  ui.capture.addEventListener('click', capturePicture);
  ui.logout.addEventListener('click', () => {
    // The token stops working on the appliance too (and on every socket it opened), not just in this browser.
    if (session.token) api('/api/logout', { method: 'POST' }).catch(() => {});
    endSession('Logged out.');
  });
  const speakOn = localStorage.getItem(SPEAK_KEY) === 'true';
  ui.speak.setAttribute('aria-pressed', String(speakOn));
  ui.speak.addEventListener('click', () => {
    const on = ui.speak.getAttribute('aria-pressed') !== 'true';
    ui.speak.setAttribute('aria-pressed', String(on));
    localStorage.setItem(SPEAK_KEY, String(on));
  });
}

setUpLogin();
setUpChat();
setUpTalk();
session.rooms = new RoomsPanel({
  deviceToken: () => session.token,
  showError,
  onUnauthorized: (error) => endSession(`Signed out: ${error.message}.`),
});
const token = storedToken();
if (token) startSession(token);
else endSession();
