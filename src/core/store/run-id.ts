/** What a run id may be: every backend accepts the same ids (the file backend names a folder after one). */
export const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
