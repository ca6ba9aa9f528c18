// Model view: placeholder until the model view lands.
export async function mount(el) { el.textContent = 'model: coming'; }
