// Streaming conversion of the microphone's float samples (44.1 or 48 kHz, whatever the audio context
// runs at) to 16 kHz signed 16-bit PCM, what the appliance's recogniser takes.
//
// A low-pass FIR at the input rate (Blackman-windowed sinc, cut off at 7 kHz, below the 8 kHz Nyquist
// limit of the output) followed by linear interpolation at the output instants. Without the filter,
// energy between 8 and 24 kHz (fans, hiss, sibilants) would fold back into the speech band. Shared by the
// AudioWorklet and the ScriptProcessor fallback, so both paths produce the same samples.

/** The sample rate the listen socket expects. */
export const OUTPUT_RATE = 16000;

const CUTOFF_HZ = 7000;

/** Blackman-windowed sinc low-pass, `taps` long (odd), cut-off `cutoff` in cycles per sample, unity gain. */
export function lowPassKernel(taps, cutoff) {
  const kernel = new Float32Array(taps);
  const middle = (taps - 1) / 2;
  let sum = 0;
  for (let i = 0; i < taps; i++) {
    const x = i - middle;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const window = 0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (taps - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (taps - 1));
    kernel[i] = sinc * window;
    sum += kernel[i];
  }
  for (let i = 0; i < taps; i++) kernel[i] /= sum;
  return kernel;
}

/** Converts successive blocks of float samples at `inputRate` into 16 kHz s16 samples, keeping state between blocks. */
export class Downsampler {
  constructor(inputRate, outputRate = OUTPUT_RATE) {
    if (!(inputRate > 0) || !(outputRate > 0)) throw new RangeError(`bad sample rates ${inputRate} → ${outputRate}`);
    this.step = inputRate / outputRate;
    // Longer filters for bigger ratios keep the transition band the same width in hertz.
    const taps = (Math.ceil(24 * Math.max(1, this.step)) | 1);
    this.kernel = lowPassKernel(taps, Math.min(CUTOFF_HZ / inputRate, 0.45));
    this.history = new Float32Array(taps - 1); // the raw samples the filter still needs from the last block
    this.previous = 0; // the last filtered sample of the last block
    this.position = 1; // where the next output falls, in input samples; 0 is `previous`
  }

  /** Filters and resamples one block; returns the 16 kHz samples it completes (possibly none). */
  process(input) {
    const n = input.length;
    const kernel = this.kernel;
    const taps = kernel.length;
    const raw = new Float32Array(taps - 1 + n);
    raw.set(this.history);
    raw.set(input, taps - 1);
    // filtered[j + 1] is the filtered value at input[j]; filtered[0] is the last block's final value.
    const filtered = new Float32Array(n + 1);
    filtered[0] = this.previous;
    for (let j = 0; j < n; j++) {
      let sum = 0;
      for (let k = 0; k < taps; k++) sum += kernel[k] * raw[j + taps - 1 - k];
      filtered[j + 1] = sum;
    }
    const out = new Int16Array(Math.max(0, Math.ceil((n - this.position) / this.step) + 1));
    let count = 0;
    while (this.position < n) {
      const i = Math.floor(this.position);
      const fraction = this.position - i;
      const value = filtered[i] + (filtered[i + 1] - filtered[i]) * fraction;
      out[count++] = toInt16(value);
      this.position += this.step;
    }
    this.position -= n;
    this.previous = filtered[n];
    this.history = raw.slice(raw.length - (taps - 1));
    return out.subarray(0, count);
  }
}

function toInt16(value) {
  const clamped = value > 1 ? 1 : value < -1 ? -1 : value;
  return Math.round(clamped < 0 ? clamped * 0x8000 : clamped * 0x7fff);
}

/** Averages the channels of one block into mono (a stereo microphone gives the same voice twice). */
export function mixToMono(channels) {
  if (channels.length === 1) return channels[0];
  const mono = new Float32Array(channels[0].length);
  for (const channel of channels) for (let i = 0; i < mono.length; i++) mono[i] += channel[i] / channels.length;
  return mono;
}
