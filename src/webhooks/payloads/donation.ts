import { pickDonor } from '../../shared/donor-fields';
import { minorStep, splitProportionally, toAmount } from '../../shared/money';
import { formatTimestamp } from '../../shared/time';
import type { PayloadFeatures } from '../payload-versions';
import type { DonationData, DonorObject, PaymentObject, PositionObject } from '../schemas/payload-schemas';
import type { RenderedEvent } from './rendered';
import type { CampaignRef, PaymentSnapshot, PositionView, ReconciliationView } from './views';

/** What one `donation` object describes: the whole payment or one of its positions. */
interface DonationPart {
  id: string;
  amountMinor: number;
  campaign: CampaignRef | null;
  purpose: string | null;
}

function donorObject(snapshot: PaymentSnapshot, features: PayloadFeatures): DonorObject {
  const rendered: DonorObject = pickDonor(snapshot.donor);
  // The spec wants the key absent, not empty, when the donation has no custom fields.
  if (features.customFields && Object.keys(snapshot.customFields).length > 0) {
    rendered.custom_fields = { ...snapshot.customFields };
  }
  return rendered;
}

function paymentObject(snapshot: PaymentSnapshot, reconciled?: ReconciliationView): PaymentObject {
  const { payment } = snapshot;
  return {
    transaction_id: payment.transactionId,
    method: payment.method,
    status: payment.status,
    ...(reconciled && {
      paid_out_amount: toAmount(reconciled.paidOutMinor),
      fee_amount: toAmount(reconciled.feeMinor),
      // A payment is reconciled as a whole, so fee and payout of all its positions are known at once.
      reconciled: true,
    }),
  };
}

function positionObject(position: PositionView): PositionObject {
  return {
    id: position.number,
    amount: toAmount(position.amountMinor),
    campaign: position.campaign && { id: position.campaign.id, title: position.campaign.title },
    purpose: position.purpose,
  };
}

function donationObject(
  snapshot: PaymentSnapshot,
  features: PayloadFeatures,
  part: DonationPart,
  extras: { positions?: PositionView[]; reconciled?: ReconciliationView } = {},
): DonationData {
  return {
    donation: {
      id: part.id,
      created_at: formatTimestamp(snapshot.createdAt, features.timestamps),
      amount: toAmount(part.amountMinor),
      currency: snapshot.currency,
      campaign: part.campaign && { id: part.campaign.id, title: part.campaign.title },
      purpose: part.purpose,
      donor: donorObject(snapshot, features),
      payment: paymentObject(snapshot, extras.reconciled),
      invoice: snapshot.invoice,
      ...(extras.positions && { positions: extras.positions.map(positionObject) }),
    },
  };
}

const positionPart = (position: PositionView): DonationPart => ({
  id: position.number,
  amountMinor: position.amountMinor,
  campaign: position.campaign,
  purpose: position.purpose,
});

/** A single donation describes itself; a multi-checkout carries its number and total, without campaign or purpose. */
function wholePaymentPart(snapshot: PaymentSnapshot): DonationPart {
  if (snapshot.positions.length === 1) return positionPart(snapshot.positions[0]);
  return {
    id: snapshot.number,
    amountMinor: snapshot.positions.reduce((sum, position) => sum + position.amountMinor, 0),
    campaign: null,
    purpose: null,
  };
}

/** donation.completed: one event with positions (v2.1), or one event per position (v1, v2). */
export function renderDonationCompleted(snapshot: PaymentSnapshot, features: PayloadFeatures): RenderedEvent<DonationData>[] {
  if (features.checkouts === 'whole-checkout') {
    return [
      {
        key: `checkout:${snapshot.number}`,
        data: donationObject(snapshot, features, wholePaymentPart(snapshot), { positions: snapshot.positions }),
      },
    ];
  }
  return snapshot.positions.map((position) => ({
    key: `donation:${position.number}`,
    data: donationObject(snapshot, features, positionPart(position)),
  }));
}

/**
 * donation.recurring_completed: a follow-up payment has exactly one position and never carries `positions`
 * (recurring donations cannot be put in the cart), on every version.
 */
export function renderRecurringCompleted(snapshot: PaymentSnapshot, features: PayloadFeatures): RenderedEvent<DonationData>[] {
  if (snapshot.positions.length !== 1) {
    throw new Error(`follow-up payment ${snapshot.number} must have exactly one position`);
  }
  return [{ key: `checkout:${snapshot.number}`, data: donationObject(snapshot, features, positionPart(snapshot.positions[0])) }];
}

/**
 * donation.reconciled: the originating payload plus payout and fee. v2.1 sends one event with `positions` and the
 * amounts of the whole payment; v1 and v2 send one event per position with its share of both amounts, split in
 * proportion to the position amounts so that the shares add up to the totals exactly, each an amount of the payout
 * currency (whole yen for JPY).
 */
export function renderDonationReconciled(
  snapshot: PaymentSnapshot,
  reconciliation: ReconciliationView,
  features: PayloadFeatures,
): RenderedEvent<DonationData>[] {
  if (features.checkouts === 'whole-checkout') {
    return [
      {
        key: `checkout:${snapshot.number}`,
        data: donationObject(snapshot, features, wholePaymentPart(snapshot), {
          positions: snapshot.positions,
          reconciled: reconciliation,
        }),
      },
    ];
  }
  const weights = snapshot.positions.map((position) => position.amountMinor);
  const step = minorStep(reconciliation.currency);
  const paidOut = splitProportionally(reconciliation.paidOutMinor, weights, step);
  const fees = splitProportionally(reconciliation.feeMinor, weights, step);
  return snapshot.positions.map((position, index) => ({
    key: `donation:${position.number}`,
    data: donationObject(snapshot, features, positionPart(position), {
      reconciled: { paidOutMinor: paidOut[index], feeMinor: fees[index], currency: reconciliation.currency },
    }),
  }));
}
