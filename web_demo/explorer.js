// Quantization explorer: placeholder until the explorer lands.
export function mount(el) { el.textContent = 'explorer: coming'; }
export function setTensor() {}
