/** The versioned API prefix: route declarations are relative to it (mounted once), clients build URLs from it. */
export const API = '/api/svc/v1';
