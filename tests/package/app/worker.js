// A module Worker running the digits model with the same code as the page.
import { runDigits } from './digits.js';

self.onmessage = async () => {
  try {
    self.postMessage(await runDigits());
  } catch (error) {
    self.postMessage({ error: String(error?.stack ?? error) });
  }
};
