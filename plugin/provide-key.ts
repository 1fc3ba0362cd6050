/** The provide/inject key of the runtime config (a module of its own: workers import only this). */
export const PROVIDE_KEY = 'vera';
