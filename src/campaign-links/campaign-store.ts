import type { Db } from '../db/knex';

/*
 * Campaigns and their campaign links (tables `campaigns`, `campaign_links`): the only module that queries them.
 * Campaigns are created by the platform's operators (here: the demo seeder); donations name them by id.
 */

const CAMPAIGNS = 'campaigns';
const CAMPAIGN_LINKS = 'campaign_links';

export interface CampaignLinkCustomField {
  name: string;
  type: 'text' | 'checkbox';
  label: string;
  required: boolean;
}

/** A row of `campaign_links`: the donation form's configuration, amounts in minor units. */
export interface CampaignLinkRow {
  id: string;
  campaign_id: number;
  active: boolean;
  currency: string;
  amounts_minor: number[];
  default_amount_minor: number;
  minimum_amount_minor: number;
  payment_methods: string[];
  purposes: string[];
  recurring_enabled: boolean;
  recurring_intervals: string[];
  custom_fields: CampaignLinkCustomField[];
  cover_fees: boolean;
  created_at: Date;
}

export type CampaignLinkWithTitle = CampaignLinkRow & { campaign_title: string };

/** A new link; what it leaves out takes the column's default (no purposes, no recurring, no custom fields). */
export type NewCampaignLink = Pick<
  CampaignLinkRow,
  'id' | 'campaign_id' | 'active' | 'currency' | 'amounts_minor' | 'default_amount_minor' | 'minimum_amount_minor' | 'payment_methods'
> &
  Partial<Pick<CampaignLinkRow, 'purposes' | 'recurring_enabled' | 'recurring_intervals' | 'cover_fees'>> & {
    custom_fields?: readonly CampaignLinkCustomField[];
  };

/** Every campaign with the ids of its links, by id: what a form may name in `campaign_id`, and where to find links. */
export async function listCampaigns(db: Db): Promise<Array<{ id: number; title: string; link_ids: string[] }>> {
  return db(`${CAMPAIGNS} as c`)
    .leftJoin(`${CAMPAIGN_LINKS} as l`, 'l.campaign_id', 'c.id')
    .groupBy('c.id', 'c.title')
    .orderBy('c.id')
    .select('c.id', 'c.title', db.raw(`coalesce(array_agg(l.id ORDER BY l.id) FILTER (WHERE l.id IS NOT NULL), '{}') AS link_ids`));
}

/** The titles of the campaigns the ids name, by id; an id that names none is not in the map. No query for no ids. */
export async function campaignTitles(db: Db, ids: readonly (number | null)[]): Promise<Map<number, string>> {
  const wanted = [...new Set(ids.filter((id): id is number => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows: Array<{ id: number; title: string }> = await db(CAMPAIGNS).whereIn('id', wanted).select('id', 'title');
  return new Map(rows.map((row) => [row.id, row.title]));
}

/** An active link with its campaign's title; undefined for an unknown or inactive link. */
export async function findActiveCampaignLink(db: Db, id: string): Promise<CampaignLinkWithTitle | undefined> {
  return db(`${CAMPAIGN_LINKS} as l`)
    .join(`${CAMPAIGNS} as c`, 'c.id', 'l.campaign_id')
    .first('l.*', 'c.title as campaign_title')
    .where({ 'l.id': id, 'l.active': true });
}

/** The id of the campaign with this title, created at `createdAt` when there is none yet. */
export async function ensureCampaign(db: Db, title: string, createdAt: Date): Promise<number> {
  const existing = await db(CAMPAIGNS).where({ title }).first('id');
  return existing?.id ?? (await db(CAMPAIGNS).insert({ title, created_at: createdAt }).returning('id'))[0].id;
}

/** Inserts the links whose id is not taken; existing links stay as they are. */
export async function insertCampaignLinksUnlessPresent(db: Db, links: readonly NewCampaignLink[]): Promise<void> {
  await db(CAMPAIGN_LINKS)
    .insert(
      links.map(({ custom_fields, ...link }) => ({
        ...link,
        ...(custom_fields && { custom_fields: JSON.stringify(custom_fields) }),
      })),
    )
    .onConflict('id')
    .ignore();
}
