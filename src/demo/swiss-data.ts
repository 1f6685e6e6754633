/**
 * The demo's Swiss world, shared by the fixed demo data (seed.ts) and the generated demo traffic (traffic-plan.ts):
 * campaigns and their purposes, the donation form's custom fields, the shop's articles, and the names and places
 * donors are made of.
 */

export const DEMO_CAMPAIGNS = [
  { title: 'Wasser für alle', purposes: ['Brunnenbau', 'Hygieneschulung'] },
  { title: 'Schulbildung in Nepal', purposes: ['Schulmaterial', 'Lehrerlöhne'] },
  { title: 'Nothilfe Ukraine', purposes: ['Winterhilfe'] },
  { title: 'Bergbauern Graubünden', purposes: ['Alpsanierung', 'Heuernte'] },
] as const;

export type DemoCampaignTitle = (typeof DEMO_CAMPAIGNS)[number]['title'];

/** The purposes a donor can choose for a campaign; none for a campaign the demo does not know. */
export function purposesOf(title: string): readonly string[] {
  return DEMO_CAMPAIGNS.find((campaign) => campaign.title === title)?.purposes ?? [];
}

/** The custom fields of the demo's donation form (its campaign link) and the answers donors give. */
export const DEMO_CUSTOM_FIELDS = [
  { name: 'Anlass', type: 'text', label: 'Anlass der Spende', required: false },
  { name: 'Spendenquittung', type: 'checkbox', label: 'Ich wünsche eine Spendenquittung', required: false },
] as const;
export const OCCASIONS = ['Geburtstag', 'Weihnachten', 'Hochzeit', 'Trauerfall', 'Jubiläum'] as const;

/** The shop's articles; prices include Swiss VAT in the gross price. */
export const SHOP_ARTICLES = [
  { article_number: 'KAL-2026', unit_price_net: 18.5, unit_price_gross: 19.95 },
  { article_number: 'KARTEN-SET', unit_price_net: 11.1, unit_price_gross: 12 },
  { article_number: 'TASSE-LOGO', unit_price_net: 13.88, unit_price_gross: 15 },
  { article_number: 'TRINKFLASCHE', unit_price_net: 23.13, unit_price_gross: 25 },
  { article_number: 'KOCHBUCH-ALP', unit_price_net: 33.14, unit_price_gross: 34 },
] as const;

export function shopArticle(articleNumber: (typeof SHOP_ARTICLES)[number]['article_number']) {
  const article = SHOP_ARTICLES.find((candidate) => candidate.article_number === articleNumber);
  if (!article) throw new Error(`unknown shop article ${articleNumber}`);
  return article;
}

export const SHIPPING_METHODS = [
  { method: 'A-Post', cost: 7 },
  { method: 'B-Post', cost: 5 },
  { method: 'Abholung', cost: 0 },
] as const;

export type Language = 'de' | 'fr' | 'it';

export interface Place {
  street: string;
  postal_code: string;
  city: string;
  language: Language;
}

export const PLACES: readonly Place[] = [
  { street: 'Bahnhofstrasse', postal_code: '8001', city: 'Zürich', language: 'de' },
  { street: 'Langstrasse', postal_code: '8004', city: 'Zürich', language: 'de' },
  { street: 'Kramgasse', postal_code: '3011', city: 'Bern', language: 'de' },
  { street: 'Steinenvorstadt', postal_code: '4051', city: 'Basel', language: 'de' },
  { street: 'Pilatusstrasse', postal_code: '6003', city: 'Luzern', language: 'de' },
  { street: 'Multergasse', postal_code: '9000', city: 'St. Gallen', language: 'de' },
  { street: 'Technikumstrasse', postal_code: '8400', city: 'Winterthur', language: 'de' },
  { street: 'Poststrasse', postal_code: '7000', city: 'Chur', language: 'de' },
  { street: 'Baarerstrasse', postal_code: '6300', city: 'Zug', language: 'de' },
  { street: 'Bahnhofplatz', postal_code: '5000', city: 'Aarau', language: 'de' },
  { street: 'Bälliz', postal_code: '3600', city: 'Thun', language: 'de' },
  { street: 'Vordergasse', postal_code: '8200', city: 'Schaffhausen', language: 'de' },
  { street: 'Rue de Bourg', postal_code: '1003', city: 'Lausanne', language: 'fr' },
  { street: 'Rue du Marché', postal_code: '1204', city: 'Genève', language: 'fr' },
  { street: 'Rue du Seyon', postal_code: '2000', city: 'Neuchâtel', language: 'fr' },
  { street: 'Rue de Romont', postal_code: '1700', city: 'Fribourg', language: 'fr' },
  { street: 'Rue du Grand-Pont', postal_code: '1950', city: 'Sion', language: 'fr' },
  { street: 'Rue de la Préfecture', postal_code: '2800', city: 'Delémont', language: 'fr' },
  { street: 'Via Nassa', postal_code: '6900', city: 'Lugano', language: 'it' },
  { street: 'Viale Stazione', postal_code: '6500', city: 'Bellinzona', language: 'it' },
  { street: 'Piazza Grande', postal_code: '6600', city: 'Locarno', language: 'it' },
];

export const FIRST_NAMES: Record<Language, { female: readonly string[]; male: readonly string[] }> = {
  de: {
    female: ['Anna', 'Laura', 'Sarah', 'Lea', 'Nina', 'Monika', 'Ursula', 'Claudia', 'Julia', 'Vreni'],
    male: ['Daniel', 'Thomas', 'Martin', 'Lukas', 'Stefan', 'Urs', 'Beat', 'Jonas', 'Matthias', 'Hansruedi'],
  },
  fr: {
    female: ['Camille', 'Sophie', 'Marie', 'Julie', 'Léa', 'Chloé', 'Nathalie'],
    male: ['Nicolas', 'Julien', 'Olivier', 'Pierre', 'Luc', 'Mathieu', 'Jérôme'],
  },
  it: {
    female: ['Giulia', 'Chiara', 'Francesca', 'Sara', 'Elena'],
    male: ['Matteo', 'Andrea', 'Davide', 'Fabio', 'Simone'],
  },
};

export const LAST_NAMES: Record<Language, readonly string[]> = {
  de: ['Meier', 'Weber', 'Huber', 'Schneider', 'Meyer', 'Steiner', 'Fischer', 'Baumann', 'Frei', 'Zimmermann', 'Moser', 'Widmer', 'Wyss', 'Graf', 'Roth', 'Bühler', 'Käser'],
  fr: ['Rochat', 'Perret', 'Bonvin', 'Girard', 'Chevalley', 'Rey', 'Pittet', 'Jaquet', 'Morand'],
  it: ['Rossi', 'Bianchi', 'Ferrari', 'Lombardi', 'Pedrazzini', 'Crivelli', 'Galli'],
};

export const PO_BOX: Record<Language, string> = { de: 'Postfach', fr: 'Case postale', it: 'Casella postale' };
export const COMPANY_FORMS = ['AG', 'GmbH', 'Treuhand AG', 'Schreinerei GmbH', 'Stiftung'] as const;
export const PHONE_AREA_CODES = ['44', '31', '61', '41', '71', '21', '22', '91', '79', '78', '76'] as const;
