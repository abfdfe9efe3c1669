/** Document statuses that hold a job waiting for review (an escalated document stays parked). */
export const PARKED_DOCUMENT_STATUSES: readonly string[] = ['in_review', 'escalated']

/** A parked document, or one a reviewer rejected: neither is delivered to a destination. */
export const isUndeliveredDocument = (status: string): boolean =>
  status === 'rejected' || PARKED_DOCUMENT_STATUSES.includes(status)
