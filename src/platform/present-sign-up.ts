import { formatTimestamp } from '../shared/time';
import type { SignUpRow } from '../newsletter/newsletter-store';

/** What the platform API answers for a newsletter sign-up. */
export function presentSignUp(row: SignUpRow) {
  return {
    subscription_id: row.id,
    contact_id: row.contact_id,
    gender: row.gender,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    language: row.language,
    channel: row.channel,
    confirmed: row.confirmed_at !== null,
    confirmed_at: row.confirmed_at && formatTimestamp(row.confirmed_at, 'utc'),
    created_at: formatTimestamp(row.created_at, 'utc'),
  };
}

export type SignUpRecord = ReturnType<typeof presentSignUp>;
