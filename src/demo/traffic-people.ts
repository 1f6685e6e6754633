import type { Random } from './random';
import { COMPANY_FORMS, FIRST_NAMES, LAST_NAMES, PHONE_AREA_CODES, type Place, PLACES, PO_BOX } from './swiss-data';

/**
 * The people of a traffic plan: made up as they are needed, Swiss names and places, each with an e-mail address of
 * their own; some of them give again. Drawn from the plan's random sequence, so the same seed gives the same people.
 */

export interface Person {
  gender: 'female' | 'male' | 'prefer-not-to-say';
  first_name: string;
  last_name: string;
  email: string;
  place: Place;
  street_number: string;
  company: string | null;
  po_box: string | null;
  phone: string | null;
}

/** E-mail local part as Swiss addresses are written: umlauts spelt out, other accents dropped. */
function mailName(name: string): string {
  return name
    .toLowerCase()
    .replace(/ä/g, 'ae')
    .replace(/ö/g, 'oe')
    .replace(/ü/g, 'ue')
    .normalize('NFD')
    .replace(/[^a-z0-9]/g, '');
}

export class People {
  private readonly known: Person[] = [];
  private readonly emails = new Set<string>();

  constructor(private readonly random: Random) {}

  get count(): number {
    return this.known.length;
  }

  /** Someone made up before. */
  pickKnown(): Person {
    return this.random.pick(this.known);
  }

  newPerson(): Person {
    const random = this.random;
    const place = random.pick(PLACES);
    const gender = random.weighted({ female: 48, male: 48, 'prefer-not-to-say': 4 } as const);
    const names = FIRST_NAMES[place.language];
    const first_name = random.pick(gender === 'prefer-not-to-say' ? random.pick([names.female, names.male]) : names[gender]);
    const last_name = random.pick(LAST_NAMES[place.language]);
    const person: Person = {
      gender,
      first_name,
      last_name,
      email: this.newEmail(first_name, last_name),
      place,
      street_number: `${random.int(1, 120)}${random.chance(0.1) ? random.pick(['a', 'b']) : ''}`,
      company: random.chance(0.08) ? `${last_name} ${random.pick(COMPANY_FORMS)}` : null,
      po_box: random.chance(0.05) ? `${PO_BOX[place.language]} ${random.int(100, 9999)}` : null,
      phone: random.chance(0.7)
        ? `+41 ${random.pick(PHONE_AREA_CODES)} ${random.int(100, 999)} ${random.int(10, 99)} ${random.int(10, 99)}`
        : null,
    };
    this.known.push(person);
    return person;
  }

  /** Most donors are new; some give again. */
  someone(): Person {
    return this.known.length > 0 && this.random.chance(0.3) ? this.pickKnown() : this.newPerson();
  }

  /** `first.last@domain`, with a number when the address is taken. */
  private newEmail(firstName: string, lastName: string): string {
    const domain = this.random.pick(['example.ch', 'example.com', 'example.org']);
    let local = `${mailName(firstName)}.${mailName(lastName)}`;
    for (let n = 2; this.emails.has(`${local}@${domain}`); n++) local = `${mailName(firstName)}.${mailName(lastName)}${n}`;
    const email = `${local}@${domain}`;
    this.emails.add(email);
    return email;
  }
}

/** Where a person lives, as donors and shop addresses give it. */
export function postalAddress(person: Person) {
  return {
    company: person.company,
    po_box: person.po_box,
    street: person.place.street,
    street_number: person.street_number,
    postal_code: person.place.postal_code,
    city: person.place.city,
    country: 'CH',
  };
}

/** A shop order's address: the person's name and where they live. */
export function address(person: Person) {
  return { first_name: person.first_name, last_name: person.last_name, ...postalAddress(person) };
}
