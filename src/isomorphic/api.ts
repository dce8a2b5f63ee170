/** The versioned API prefix: route declarations are relative to it (mounted once), clients build URLs from it. */
export const API = '/api/svc/v1';

/** CoT uid of an exported track: the CoT export writes it and the globe lists such a track once. */
export const COT_TRACK_UID_PREFIX = 'svc-track-';
