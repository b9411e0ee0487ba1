/** `phi-rx/postgres`: sessions in PostgreSQL. Bring your own `pg` (an optional peer dependency). */
export * from './postgres-session-store.js';
