// Drop-in rooms in the page (docs/rooms.md, docs/server-api.md "Rooms"): the name others see (`POST /auth`), the
// open rooms with refresh, a dialog to create one, and a room's view: a grid of members (a circle with the name
// under it, a ring while that member speaks, appliances marked), mute and leave, bring the appliance in or send
// it out, and the live audio.
//
// Rooms need a person's token: the paired device's token asks for one with the chosen name, and the page keeps
// it next to the device's. Joins, leaves and who is speaking arrive on an events socket opened with it.

import { APIError, request, socketURL } from './api.js';
import { EventStream } from './events.js';
import { RoomAudio, roomAudioAvailability } from './room-audio.js';
import { PushToTalk } from './talk.js';

const PERSON_KEY = 'hark.person';

const $ = (id) => document.getElementById(id);

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The initials in a member's circle: "Ada Lovelace" → "AL", "kitchen" → "K". */
export function initials(name) {
  const words = String(name ?? '').trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return '?';
  return (words.length === 1 ? [...words[0]].slice(0, 1) : [words[0], words[words.length - 1]].map((w) => [...w][0])).join('').toUpperCase();
}

export class RoomsPanel {
  /**
   * @param {object} options
   * @param {() => string | null} options.deviceToken the paired device's token (null when signed out)
   * @param {(error: Error) => void} options.showError
   * @param {(error: APIError) => void} options.onUnauthorized the device's token no longer works
   */
  constructor({ deviceToken, showError, onUnauthorized }) {
    this.deviceToken = deviceToken;
    this.showError = showError;
    this.onUnauthorized = onUnauthorized;
    this.ui = {
      panel: $('rooms'), toggle: $('rooms-toggle'), close: $('rooms-close'),
      nameForm: $('room-name-form'), nameInput: $('room-name'), who: $('room-who'), rename: $('room-rename'),
      list: $('room-list'), listView: $('room-list-view'), empty: $('room-empty'), refresh: $('rooms-refresh'),
      create: $('room-create'), dialog: $('room-dialog'), dialogForm: $('room-dialog-form'), dialogName: $('room-dialog-name'),
      dialogCancel: $('room-dialog-cancel'),
      roomView: $('room-view'), roomTitle: $('room-title'), members: $('room-members'), audioState: $('room-audio-state'),
      mute: $('room-mute'), leave: $('room-leave'), ask: $('room-ask'), assistant: $('room-assistant'),
      appliance: $('room-appliance'),
    };
    this.person = null; // {id, name, jwt, expires}
    this.room = null; // {id, display_name}
    this.context = null; // the Watson context of questions asked from the room
    this.members = new Map();
    this.audio = null;
    this.events = null;
    this.wire();
  }

  wire() {
    const ui = this.ui;
    ui.toggle.addEventListener('click', () => (ui.panel.hidden ? this.open() : this.close()));
    ui.close.addEventListener('click', () => this.close());
    ui.nameForm.addEventListener('submit', (event) => {
      event.preventDefault();
      this.chooseName(ui.nameInput.value.trim());
    });
    ui.rename.addEventListener('click', () => this.showNameForm(true));
    ui.refresh.addEventListener('click', () => this.refresh());
    ui.create.addEventListener('click', () => {
      ui.dialogName.value = '';
      ui.dialog.showModal();
      ui.dialogName.focus();
    });
    ui.dialogCancel.addEventListener('click', () => ui.dialog.close());
    ui.dialogForm.addEventListener('submit', (event) => {
      event.preventDefault();
      const name = ui.dialogName.value.trim();
      if (!name) return;
      ui.dialog.close();
      this.createRoom(name);
    });
    ui.mute.addEventListener('click', () => {
      const muted = ui.mute.getAttribute('aria-pressed') !== 'true';
      ui.mute.setAttribute('aria-pressed', String(muted));
      ui.mute.querySelector('.label').textContent = muted ? 'Unmute' : 'Mute';
      this.audio?.setMuted(muted);
    });
    ui.leave.addEventListener('click', () => this.leaveRoom());
    ui.appliance.addEventListener('click', () => this.moveAppliance());
    // Asking the assistant from the room: push-to-talk on `/api/listen?room=ID`; the appliance says the reply
    // into the room, so everyone hears it (this page too, through the mix: its WAV is not played again here).
    this.ask = new PushToTalk({
      socketURL: () => socketURL('/api/listen', this.person.jwt, { room: this.room.id }),
      conversation: () => this.context,
      onState: (state) => {
        ui.ask.setAttribute('aria-pressed', String(state === 'recording'));
        ui.ask.textContent = state === 'recording' ? 'Listening… let go to ask' : state === 'waiting' ? 'Asking…' : 'Hold to ask Hark';
      },
      onPartial: (text) => { if (text) ui.assistant.textContent = `You: ${text}…`; },
      onTranscript: (message) => { ui.assistant.textContent = `You: ${message.text || (message.reason ? `(nothing heard: ${message.reason})` : '(nothing heard)')}`; },
      onReply: (message) => {
        if (message.response?.context) this.context = message.response.context;
        ui.assistant.textContent = `Hark: ${message.text ?? ''}`;
      },
      onAudio: () => {},
      onError: (error) => this.showError(error),
      onTooShort: () => { ui.assistant.textContent = 'Hold the button while you speak.'; },
    });
    ui.ask.addEventListener('pointerdown', (event) => {
      if (event.button !== 0 || !this.room) return;
      try { ui.ask.setPointerCapture(event.pointerId); } catch { /* a synthetic pointer */ }
      this.ask.press();
    });
    for (const name of ['pointerup', 'pointercancel', 'lostpointercapture']) ui.ask.addEventListener(name, () => this.ask.release());
    ui.ask.addEventListener('contextmenu', (event) => event.preventDefault());
  }

  /**
   * The room's own conversation with the assistant: begun, as Watson's clients do, with an empty message whose
   * context (the welcome's) the first question carries; otherwise the welcome would answer it.
   */
  async startConversation() {
    try {
      const response = await this.api('/v1/workspaces/default/message?version=2021-06-14', { method: 'POST', body: {} });
      this.context = response?.context ?? null;
    } catch (error) {
      this.showError(error);
    }
  }

  /** A request with the person's token; a 401 means that token is gone: ask for the name again. */
  async api(path, options = {}) {
    try {
      return await request(path, { ...options, token: this.person?.jwt });
    } catch (error) {
      if (error instanceof APIError && error.status === 401) {
        this.forgetPerson();
        this.showNameForm(false);
      }
      throw error;
    }
  }

  open() {
    this.ui.panel.hidden = false;
    this.ui.toggle.setAttribute('aria-expanded', 'true');
    this.person = this.storedPerson();
    if (!this.person) this.showNameForm(false);
    else this.showList();
  }

  close() {
    this.leaveRoom({ quiet: true });
    this.ui.panel.hidden = true;
    this.ui.toggle.setAttribute('aria-expanded', 'false');
  }

  /** Signing out of the page ends the rooms too. */
  reset() {
    this.close();
    this.forgetPerson();
  }

  storedPerson() {
    try {
      const person = JSON.parse(localStorage.getItem(PERSON_KEY) ?? 'null');
      if (!person?.jwt || (person.expires && Date.parse(person.expires) <= Date.now())) return null;
      return person;
    } catch {
      return null;
    }
  }

  forgetPerson() {
    this.person = null;
    localStorage.removeItem(PERSON_KEY);
  }

  showNameForm(renaming) {
    const ui = this.ui;
    ui.nameForm.hidden = false;
    ui.listView.hidden = true;
    ui.roomView.hidden = true;
    ui.nameInput.value = renaming ? this.person?.name ?? '' : '';
    ui.nameInput.focus();
  }

  async chooseName(name) {
    if (!name) {
      this.showError(new Error('Choose the name the others in a room will see.'));
      return;
    }
    try {
      // A person renaming themselves keeps their id; the first time, the device's token vouches for them.
      const token = this.person?.jwt ?? this.deviceToken();
      const answer = await request('/auth', { method: 'POST', body: { name }, token, onUnauthorized: this.person ? undefined : this.onUnauthorized });
      if (typeof answer?.jwt !== 'string') throw new APIError(200, 'bad_response', 'The appliance did not send a token for the name.');
      this.person = { id: answer.id, name: answer.name, jwt: answer.jwt, expires: answer.expires };
      localStorage.setItem(PERSON_KEY, JSON.stringify(this.person));
      this.showList();
    } catch (error) {
      this.showError(error);
    }
  }

  showList() {
    const ui = this.ui;
    ui.nameForm.hidden = true;
    ui.roomView.hidden = true;
    ui.listView.hidden = false;
    ui.who.textContent = this.person.name;
    this.refresh();
  }

  async refresh() {
    try {
      const rooms = await this.api('/rooms');
      const ui = this.ui;
      ui.list.replaceChildren();
      for (const room of Array.isArray(rooms) ? rooms : []) {
        const item = element('li', 'room');
        const button = element('button', 'room-join', room.display_name);
        button.type = 'button';
        button.dataset.room = room.id;
        button.addEventListener('click', () => this.joinRoom(room));
        item.append(button);
        ui.list.append(item);
      }
      ui.empty.hidden = ui.list.childElementCount > 0;
    } catch (error) {
      this.showError(error);
    }
  }

  async createRoom(displayName) {
    try {
      const answer = await this.api('/rooms', { method: 'POST', body: { display_name: displayName } });
      await this.joinRoom({ id: answer.id, display_name: displayName });
    } catch (error) {
      this.showError(error);
    }
  }

  async joinRoom(room) {
    if (this.room) await this.leaveRoom({ quiet: true });
    try {
      await this.api(`/rooms/${encodeURIComponent(room.id)}/join`, { method: 'POST' });
      this.room = room;
      const ui = this.ui;
      ui.listView.hidden = true;
      ui.roomView.hidden = false;
      ui.roomView.dataset.room = room.id;
      ui.roomTitle.textContent = room.display_name;
      ui.mute.setAttribute('aria-pressed', 'false');
      ui.mute.querySelector('.label').textContent = 'Mute';
      this.members.clear();
      ui.members.replaceChildren();
      this.showAppliance(false);
      this.startEvents();
      await this.loadMembers();
      if (!this.context) this.startConversation(); // ready before the first question
      await this.startAudio(room);
    } catch (error) {
      this.showError(error);
      if (error instanceof APIError && (error.status === 404 || error.status === 410)) this.refresh();
    }
  }

  /**
   * Brings the appliance (its microphone and speaker) into this room, or sends it out: `POST /rooms/{id}/appliance`.
   * The button follows the appliance's membership as the members list and the events report it.
   */
  async moveAppliance() {
    if (!this.room) return;
    const inRoom = this.ui.appliance.getAttribute('aria-pressed') === 'true';
    this.ui.appliance.disabled = true;
    try {
      const moved = await this.api(`/rooms/${encodeURIComponent(this.room.id)}/appliance`, {
        method: 'POST', body: { action: inRoom ? 'leave' : 'join' },
      });
      if (moved?.member) this.showMember(moved.member);
    } catch (error) {
      this.showError(error);
    } finally {
      this.ui.appliance.disabled = false;
    }
  }

  showAppliance(inRoom) {
    this.ui.appliance.setAttribute('aria-pressed', String(inRoom));
    this.ui.appliance.textContent = inRoom ? 'Send Hark out' : 'Bring Hark in';
  }

  async loadMembers() {
    if (!this.room) return;
    const members = await this.api(`/rooms/${encodeURIComponent(this.room.id)}/members`);
    for (const member of Array.isArray(members) ? members : []) this.showMember(member);
  }

  /** Adds, updates or (state "left") removes a member's circle. */
  showMember(member) {
    if (!member?.id) return;
    const ui = this.ui;
    let tile = this.members.get(member.id);
    if (member.kind === 'appliance') this.showAppliance(member.state === 'joined');
    if (member.state !== 'joined') {
      tile?.remove();
      this.members.delete(member.id);
      return;
    }
    if (!tile) {
      tile = element('li', 'member');
      tile.dataset.member = member.id;
      const circle = element('span', 'circle', initials(member.name));
      circle.setAttribute('aria-hidden', 'true');
      const name = element('span', 'name', member.name);
      tile.append(circle, name);
      if (member.kind === 'appliance') tile.append(element('span', 'badge', 'appliance'));
      this.members.set(member.id, tile);
      ui.members.append(tile);
    }
    tile.dataset.kind = member.kind ?? 'person';
    tile.classList.toggle('me', member.id === this.person?.id);
    this.setSpeaking(member.id, Boolean(member.speaking));
  }

  setSpeaking(id, speaking) {
    const tile = this.members.get(id);
    if (!tile) return;
    tile.dataset.speaking = String(speaking);
    const name = tile.querySelector('.name')?.textContent ?? id;
    tile.setAttribute('aria-label', `${name}${tile.dataset.kind === 'appliance' ? ' (appliance)' : ''}${speaking ? ', speaking' : ''}`);
  }

  startEvents() {
    this.events?.stop();
    this.events = new EventStream({
      url: (since) => socketURL('/api/events', this.person.jwt, since === null ? {} : { since }),
      onEvent: (event) => this.onEvent(event),
      onState: () => {},
      beforeRetry: async () => {
        if (!this.room) return false;
        try {
          await this.loadMembers(); // catches up joins and leaves missed while the socket was down
          return true;
        } catch (error) {
          return !(error instanceof APIError && error.status === 401);
        }
      },
    });
    this.events.start();
  }

  onEvent(event) {
    if (!this.room || event?.room !== this.room.id) return;
    switch (event.kind) {
      case 'member:joined':
      case 'member:left':
        this.showMember(event.member);
        break;
      case 'audio:speaking:on':
      case 'audio:speaking:off':
        this.setSpeaking(event.member, event.kind === 'audio:speaking:on');
        break;
      case 'audio:level': {
        const tile = this.members.get(event.member);
        if (tile) tile.style.setProperty('--level', String(Math.max(0, Math.min(1, Number(event.level) || 0))));
        break;
      }
      case 'room:closed':
        this.showError(new Error(`${this.room.display_name} was closed.`));
        this.leaveRoom({ quiet: true, alreadyGone: true });
        break;
      default:
        break;
    }
  }

  async startAudio(room) {
    const ui = this.ui;
    const problem = await roomAudioAvailability();
    if (problem) {
      ui.audioState.textContent = problem;
      return;
    }
    ui.audioState.textContent = 'Connecting the sound…';
    this.audio = new RoomAudio({
      url: socketURL(`/rooms/${encodeURIComponent(room.id)}/audio`, this.person.jwt),
      onState: (state, why) => {
        ui.roomView.dataset.audio = state;
        ui.audioState.textContent = state === 'live' ? 'Live: the others hear you.' : state === 'closed' ? why ?? 'The sound stopped.' : 'Connecting the sound…';
      },
      onError: (error) => this.showError(error),
    });
    window.harkRoomAudio = this.audio; // the stats, for the curious and for the browser test
    try {
      await this.audio.start();
    } catch (error) {
      this.audio.stop();
      ui.audioState.textContent = `No sound: ${error.message}`;
      this.showError(new Error(`The microphone cannot be used: ${error.message}`));
    }
  }

  async leaveRoom({ quiet = false, alreadyGone = false } = {}) {
    const room = this.room;
    if (!room) return;
    this.room = null;
    this.ask?.cancel();
    this.ui.assistant.textContent = '';
    this.audio?.stop();
    this.audio = null;
    this.events?.stop();
    this.events = null;
    if (!alreadyGone) {
      try {
        await this.api(`/rooms/${encodeURIComponent(room.id)}/leave`, { method: 'POST' });
      } catch (error) {
        if (!quiet) this.showError(error);
      }
    }
    if (!this.ui.panel.hidden && this.person) this.showList();
  }
}
