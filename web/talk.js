// Push-to-talk: while the button is held, the microphone's audio goes to `WS /api/listen` as 16 kHz mono
// s16le binary messages; on release `{"type": "end"}`; the appliance answers with `partial` transcripts,
// the `transcript`, the `reply` and finally the reply as one binary WAV message.
//
// The socket opens when the button goes down, in parallel with the microphone; audio captured before it
// is open is queued, so the first syllable is not lost. The microphone stays open for a short while after
// a turn, so a quick follow-up starts at once, then it is released (and the browser's indicator goes off).

import { Downsampler, mixToMono } from './downsampler.js';

/** Keep recording this long after release: people let go on the last syllable. */
const TAIL_MS = 150;
/** A press shorter than this is a tap, not speech: cancelled, with a hint. */
const MIN_PRESS_MS = 300;
/** How long to wait for the reply after the end of speech. */
const REPLY_TIMEOUT_MS = 30000;
/** Release the microphone after this long unused. */
const RELEASE_MIC_MS = 20000;

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Why a turn did not complete, in words for the user. */
export class TalkError extends Error {
  constructor(message, { code = 'talk', cause } = {}) {
    super(message, { cause });
    this.name = 'TalkError';
    this.code = code;
  }
}

/** Whether this browser, in this context, can capture the microphone (HTTPS or localhost is required). */
export function microphoneAvailability() {
  if (!window.isSecureContext) return 'The microphone needs a secure page: open the appliance over HTTPS (or on localhost).';
  if (!navigator.mediaDevices?.getUserMedia) return 'This browser cannot capture the microphone.';
  if (!window.AudioContext && !window.webkitAudioContext) return 'This browser has no Web Audio.';
  return null;
}

export class PushToTalk {
  /**
   * @param {object} handlers
   * @param {() => string} handlers.socketURL the listen socket's URL, token included
   * @param {() => object|null} [handlers.conversation] the Watson context to continue (sent with the end message)
   * @param {(state: string) => void} handlers.onState "idle", "starting", "recording", "waiting"
   * @param {(text: string) => void} handlers.onPartial a live partial transcript
   * @param {(message: object) => void} handlers.onTranscript `{text, acoustic_confidence, accepted}`
   * @param {(message: object) => void} handlers.onReply `{text, response}`
   * @param {(wav: ArrayBuffer) => void} handlers.onAudio the reply, as a WAV file
   * @param {(error: Error) => void} handlers.onError the turn failed; the state is back to idle
   * @param {() => void} handlers.onTooShort the press was a tap
   */
  constructor(handlers) {
    this.handlers = handlers;
    this.state = 'idle';
    this.context = null;
    this.stream = null;
    this.source = null;
    this.capture = null; // {node, flush()}
    this.releaseTimer = null;
    this.turn = null;
  }

  setState(state) {
    this.state = state;
    this.handlers.onState(state);
  }

  /** The button went down. Ignored unless idle (a reply is still coming, or the press is already on). */
  async press() {
    if (this.state !== 'idle') return;
    clearTimeout(this.releaseTimer);
    const turn = { pressedAt: performance.now(), released: false, queue: [], socket: null, ended: false, done: false, timer: null };
    this.turn = turn;
    this.setState('starting');
    try {
      turn.socket = this.openSocket(turn);
      await this.startCapture(turn);
    } catch (error) {
      this.fail(turn, error instanceof TalkError ? error : microphoneError(error));
      return;
    }
    if (this.turn !== turn) return;
    this.setState('recording');
    if (turn.released) this.release(); // let go while the microphone was still starting
  }

  /** The button came up: finish the utterance (or cancel a tap). */
  async release() {
    const turn = this.turn;
    if (!turn) return;
    if (this.state === 'starting') {
      turn.released = true; // press() comes back here once the microphone is up
      return;
    }
    if (this.state !== 'recording') return;
    turn.released = true;
    if (performance.now() - turn.pressedAt < MIN_PRESS_MS) {
      this.stopCapture();
      this.finish(turn);
      turn.socket?.close(1000, 'cancelled');
      this.handlers.onTooShort();
      return;
    }
    this.setState('waiting');
    await delay(TAIL_MS);
    await this.capture?.flush();
    this.stopCapture();
    if (this.turn !== turn) return;
    turn.ended = true;
    const context = this.handlers.conversation?.() ?? null;
    this.send(turn, JSON.stringify(context ? { type: 'end', context } : { type: 'end' }));
    turn.timer = setTimeout(() => this.fail(turn, new TalkError('The appliance did not answer in time.', { code: 'timeout' })), REPLY_TIMEOUT_MS);
  }

  /** Abandons the current turn without an answer (logout, page hidden mid-press). */
  cancel() {
    const turn = this.turn;
    if (!turn) return;
    this.stopCapture();
    this.finish(turn);
    turn.socket?.close(1000, 'cancelled');
  }

  // --- the socket -----------------------------------------------------------------------------------

  openSocket(turn) {
    let socket;
    try {
      socket = new WebSocket(this.handlers.socketURL());
    } catch (error) {
      throw new TalkError(`Cannot open the listen socket: ${error.message}`, { code: 'socket', cause: error });
    }
    socket.binaryType = 'arraybuffer';
    socket.onopen = () => {
      for (const data of turn.queue) socket.send(data);
      turn.queue = [];
    };
    socket.onmessage = (message) => this.receive(turn, message.data);
    socket.onclose = (close) => {
      if (turn.done) return;
      const reason = close.reason ? `: ${close.reason}` : '';
      this.fail(turn, new TalkError(
        turn.ended ? `The appliance closed the connection before answering${reason}.` : `The listen connection was refused or lost${reason}.`,
        { code: 'closed' },
      ));
    };
    return socket;
  }

  send(turn, data) {
    const socket = turn.socket;
    if (socket && socket.readyState === WebSocket.OPEN) socket.send(data);
    else if (socket && socket.readyState === WebSocket.CONNECTING) turn.queue.push(data);
  }

  receive(turn, data) {
    if (turn.done) return;
    if (data instanceof ArrayBuffer) {
      this.finish(turn);
      turn.socket.close(1000, 'done');
      this.handlers.onAudio(data);
      return;
    }
    let message;
    try {
      message = JSON.parse(data);
    } catch {
      console.warn('listen socket: not JSON:', String(data).slice(0, 80));
      return;
    }
    if (message?.error || message?.type === 'error') {
      const error = message.error ?? message;
      this.fail(turn, new TalkError(error.message ?? 'The appliance could not listen.', { code: error.code ?? 'error' }));
      turn.socket.close(1000, 'error');
      return;
    }
    switch (message?.type) {
      case 'partial':
        if (typeof message.text === 'string') this.handlers.onPartial(message.text);
        break;
      case 'transcript':
        this.handlers.onTranscript(message);
        break;
      case 'reply':
        this.handlers.onReply(message);
        break;
      default:
        console.warn('listen socket: unknown message', message);
    }
  }

  finish(turn) {
    turn.done = true;
    clearTimeout(turn.timer);
    if (this.turn === turn) {
      this.turn = null;
      this.setState('idle');
      this.scheduleMicrophoneRelease();
    }
  }

  fail(turn, error) {
    if (turn.done) return;
    this.stopCapture();
    this.finish(turn);
    if (turn.socket && turn.socket.readyState <= WebSocket.OPEN) turn.socket.close(1000, 'failed');
    this.handlers.onError(error);
  }

  // --- the microphone -------------------------------------------------------------------------------

  async startCapture(turn) {
    const unavailable = microphoneAvailability();
    if (unavailable) throw new TalkError(unavailable, { code: 'unsupported' });
    if (!this.context) {
      const Context = window.AudioContext ?? window.webkitAudioContext;
      this.context = new Context({ latencyHint: 'interactive' });
    }
    if (this.context.state === 'suspended') await this.context.resume();
    if (!this.stream || this.stream.getAudioTracks().every((track) => track.readyState === 'ended')) {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
      });
      this.source = this.context.createMediaStreamSource(this.stream);
    }
    const onSamples = (samples) => {
      if (this.turn !== turn || turn.ended) return;
      this.send(turn, littleEndian(samples).buffer);
    };
    this.capture = this.context.audioWorklet ? await this.workletCapture(onSamples) : this.scriptProcessorCapture(onSamples);
    this.source.connect(this.capture.node);
  }

  /** The AudioWorklet path: resampling runs on the audio thread (pcm-worklet.js). */
  async workletCapture(onSamples) {
    if (!this.workletLoaded) {
      this.workletLoaded = this.context.audioWorklet.addModule(new URL('./pcm-worklet.js', import.meta.url));
    }
    await this.workletLoaded;
    const node = new AudioWorkletNode(this.context, 'hark-pcm-capture', { numberOfInputs: 1, numberOfOutputs: 1, channelCount: 1, channelCountMode: 'explicit' });
    let flushed = null;
    node.port.onmessage = (event) => {
      if (event.data instanceof Int16Array) onSamples(event.data);
      else if (event.data?.flushed) flushed?.();
    };
    this.connectSilently(node);
    return {
      node,
      flush: () => new Promise((resolve) => {
        flushed = resolve;
        node.port.postMessage('flush');
        setTimeout(resolve, 500); // a stalled audio thread must not hold the turn forever
      }),
    };
  }

  /** Browsers without AudioWorklet: the deprecated ScriptProcessor, same resampler on the main thread. */
  scriptProcessorCapture(onSamples) {
    const node = this.context.createScriptProcessor(2048, 1, 1);
    const downsampler = new Downsampler(this.context.sampleRate);
    node.onaudioprocess = (event) => {
      const channels = [];
      for (let c = 0; c < event.inputBuffer.numberOfChannels; c++) channels.push(event.inputBuffer.getChannelData(c));
      const pcm = downsampler.process(mixToMono(channels));
      if (pcm.length) onSamples(pcm.slice());
    };
    this.connectSilently(node);
    return { node, flush: async () => {} };
  }

  /** Capture nodes only run when the graph pulls them: route them to the output through a muted gain. */
  connectSilently(node) {
    const mute = this.context.createGain();
    mute.gain.value = 0;
    node.connect(mute).connect(this.context.destination);
  }

  stopCapture() {
    if (!this.capture) return;
    try {
      this.source?.disconnect(this.capture.node);
    } catch {
      // already disconnected
    }
    this.capture.node.disconnect();
    if (this.capture.node.port) this.capture.node.port.onmessage = null;
    this.capture = null;
  }

  scheduleMicrophoneRelease() {
    clearTimeout(this.releaseTimer);
    this.releaseTimer = setTimeout(() => this.releaseMicrophone(), RELEASE_MIC_MS);
  }

  /** Stops the tracks, so the browser's recording indicator goes off; the next press asks again (without a prompt). */
  releaseMicrophone() {
    if (this.state !== 'idle') return;
    this.stream?.getTracks().forEach((track) => track.stop());
    this.stream = null;
    this.source = null;
    this.context?.suspend().catch(() => {});
  }
}

function microphoneError(error) {
  const messages = {
    NotAllowedError: 'The microphone is blocked: allow it for this page in the browser’s site settings.',
    NotFoundError: 'No microphone was found.',
    NotReadableError: 'The microphone is in use by another application.',
    SecurityError: 'The microphone needs a secure page (HTTPS).',
  };
  return new TalkError(messages[error?.name] ?? `The microphone could not start: ${error?.message ?? error}`, { code: 'microphone', cause: error });
}

/** The listen socket takes little-endian samples; every common platform already is. */
function littleEndian(samples) {
  if (LITTLE_ENDIAN) return samples;
  const bytes = new DataView(new ArrayBuffer(samples.length * 2));
  samples.forEach((sample, i) => bytes.setInt16(i * 2, sample, true));
  return new Int16Array(bytes.buffer);
}

function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
