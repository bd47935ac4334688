// The enrichRecord contract as zod schemas: the single source of the request, response, household,
// career and error shapes. Types are inferred from here and the OpenAPI document is generated from here.
import { z } from 'zod';

/** Longest string we accept per request field; the 64 KiB body limit bounds the whole request. */
export const STRING_LIMITS = {
  id: 256,
  name: 256,
  email: 320,
  phone: 64,
  address: 512,
  city: 128,
  state: 64,
  zipcode: 16,
  company_name: 256,
} as const;

/** The spec's limit on emails, phones and addresses. */
export const MAX_LIST_ENTRIES = 10;

const optionalText = (max: number, description: string) => z.string().max(max).nullable().optional().meta({ description });

export const AddressSchema = z
  .object({
    address: optionalText(
      STRING_LIMITS.address,
      'Street address; multiple lines joined with a single space. May hold a full address when components are not available separately.',
    ),
    city: optionalText(STRING_LIMITS.city, 'City or locality.'),
    state: optionalText(STRING_LIMITS.state, 'State abbreviation or full name. May be inferred from the zip code.'),
    zipcode: optionalText(STRING_LIMITS.zipcode, 'US zip (5 digits, optional +4) or Canadian postal code.'),
  })
  .meta({ id: 'Address' });

const list = <T extends z.ZodType>(item: T, description: string) =>
  z
    .array(item)
    .max(MAX_LIST_ENTRIES)
    .nullable()
    .optional()
    .meta({ description: `${description} At most ${MAX_LIST_ENTRIES} entries; null or absent means none.` });

export const EnrichmentRequestSchema = z
  .object({
    id: optionalText(STRING_LIMITS.id, "Identifier from the caller's system, echoed back in the response."),
    first_name: optionalText(STRING_LIMITS.name, 'First name.'),
    last_name: optionalText(STRING_LIMITS.name, 'Last name. A caller who has only a full name puts it here and leaves first_name empty.'),
    addresses: list(AddressSchema, 'Postal addresses.'),
    emails: list(z.string().max(STRING_LIMITS.email), 'E-mail addresses.'),
    phones: list(z.string().max(STRING_LIMITS.phone), 'Phone numbers in any common format; +1 (United States) is assumed when no country code is given.'),
    company_name: optionalText(STRING_LIMITS.company_name, 'Company associated with the person.'),
  })
  .meta({ id: 'EnrichmentRequest', description: 'One person record. No field is required; unknown fields are ignored.' });

const confidence = z.number().min(0.1).max(1).meta({ description: 'Match strength, 0.1 to 1.0; 1.0 is a very strong match.' });
const isoDate = z.iso.date().meta({ description: 'Date, YYYY-MM-DD.' });

// Political opinions are a special category of personal data: an account sees these fields only when
// it is entitled to political data (core/accounts/entitlements.ts).
const POLITICAL_DATA = 'Political data: present only for accounts entitled to political data.';

/** Household data: all 32 fields of docs/reference/contract.md. Only confidence and windfall_id are always present. */
export const HouseholdSchema = z
  .object({
    windfall_id: z
      .string()
      .regex(/^[0-9a-f]{32}$/)
      .meta({ description: 'Stable household identifier, 32 lowercase hex characters.' }),
    confidence,
    net_worth: z.number().int().optional().meta({ description: 'Estimated net worth in dollars.' }),
    low_confidence_net_worth: z.number().int().optional(),
    high_confidence_net_worth: z.number().int().optional(),
    net_worth_last_calculated: isoDate.optional(),
    loan_to_value: z.number().optional().meta({ description: 'Decimal ratio, e.g. 0.42.' }),
    multi_property_owner: z.boolean().optional(),
    rental_property_owner: z.boolean().optional(),
    boat_owner: z.boolean().optional(),
    plane_owner: z.boolean().optional(),
    recent_mover: z.boolean().optional(),
    recently_divorced: z.boolean().optional(),
    recent_death_in_family: z.boolean().optional(),
    philanthropic_giver: z.boolean().optional(),
    top_philanthropic_donor: z.boolean().optional(),
    philanthropic_cause: z.array(z.string()).optional().meta({ description: 'NTEE major group codes, e.g. "B", "E".' }),
    regional_focus: z.array(z.string()).optional().meta({ description: 'e.g. "National", "GA".' }),
    donor_advised_funds: z.boolean().optional(),
    foundation_association: z.boolean().optional(),
    foundation_officer_trustee: z.boolean().optional(),
    nonprofit_board_member: z.boolean().optional(),
    political_donor: z.boolean().optional().meta({ description: POLITICAL_DATA }),
    top_political_donor: z.boolean().optional().meta({ description: POLITICAL_DATA }),
    political_party: z.enum(['Democrat', 'Republican', 'Independent']).optional().meta({ description: POLITICAL_DATA }),
    money_in_motion: z.boolean().optional(),
    liquidity_trigger: z.boolean().optional(),
    has_household_debt: z.boolean().optional(),
    crypto_interest: z.boolean().optional(),
    small_business_owner: z.boolean().optional(),
    trust_association: z.boolean().optional(),
    primary_address_incorrect: z.boolean().optional(),
  })
  .meta({ id: 'Household', description: 'Household data. Fields vary by account configuration.' });

/** Career data: all 26 fields of docs/reference/contract.md. Only confidence is always present. */
export const CareerSchema = z
  .object({
    confidence,
    career_data_last_updated: isoDate.optional(),
    linkedin_url: z.string().optional().meta({ description: 'Profile URL without scheme, e.g. linkedin.com/in/amanda-taylor.' }),
    job_title: z.string().optional(),
    job_level: z.string().optional().meta({ description: 'e.g. C-Suite, VP, Director, Manager, Individual Contributor.' }),
    job_function: z.string().optional().meta({ description: 'Department, e.g. Finance, Engineering.' }),
    job_start_date: isoDate.optional(),
    recently_changed_jobs: z.boolean().optional(),
    recently_promoted: z.boolean().optional(),
    recently_retired: z.boolean().optional(),
    recently_changed_companies: z.boolean().optional(),
    possibly_student: z.boolean().optional(),
    possibly_unemployed: z.boolean().optional(),
    possible_additional_jobs: z.boolean().optional(),
    company_name: z.string().optional(),
    company_domain: z.string().optional(),
    company_phone_number: z.string().optional(),
    company_address_line_one: z.string().optional(),
    company_address_line_two: z.string().optional(),
    company_city: z.string().optional(),
    company_state: z.string().optional(),
    company_zip: z.string().optional(),
    company_naics_code: z.string().optional(),
    company_category: z.string().optional().meta({ description: 'e.g. Public Company, Private Company, Educational, Government Agency, Nonprofit.' }),
    company_size_range: z.string().optional().meta({ description: 'e.g. 1-10, 51-200, 10,000+.' }),
    company_revenue_range: z.string().optional().meta({ description: 'e.g. $1-10M, $10-50M, > $1B.' }),
  })
  .meta({ id: 'Career', description: 'Career data. Requires Career Intelligence. Fields vary by account configuration.' });

export const EnrichmentResponseSchema = z
  .object({
    id: z.string().nullable().optional().meta({ description: 'The submitted id, echoed exactly (including null) when the request carried one.' }),
    household_matched: z.boolean(),
    career_matched: z.boolean(),
    household: HouseholdSchema.nullable()
      .optional()
      .meta({ description: 'Present when household_matched. Production sends null when unmatched; the sandbox omits the key.' }),
    career: CareerSchema.nullable()
      .optional()
      .meta({ description: 'Present when career_matched. Production sends null when unmatched; the sandbox omits the key.' }),
  })
  .meta({ id: 'EnrichmentResponse' });

/** Production's shape: both objects always present, `null` when unmatched. */
export const ProductionResponseSchema = EnrichmentResponseSchema.extend({
  household: HouseholdSchema.nullable().meta({ description: 'Household data, or null when household_matched is false.' }),
  career: CareerSchema.nullable().meta({ description: 'Career data, or null when career_matched is false.' }),
}).meta({ id: 'ProductionEnrichmentResponse' });

/** The sandbox's shape: an unmatched object is omitted, never null. */
export const SandboxResponseSchema = EnrichmentResponseSchema.extend({
  household: HouseholdSchema.optional().meta({ description: 'Household data; omitted when household_matched is false.' }),
  career: CareerSchema.optional().meta({ description: 'Career data; omitted when career_matched is false.' }),
}).meta({ id: 'SandboxEnrichmentResponse' });

export const ERROR_CODES = [
  'invalid_request',
  'unauthorized',
  'forbidden_environment',
  'https_required',
  'quota_exhausted',
  'rate_limit',
  'internal_error',
  'service_unavailable',
  // Ours, beyond docs/reference/contract.md: answers to paths and methods outside the two endpoints.
  'not_found',
  'method_not_allowed',
] as const;

export const ProductionErrorSchema = z
  .object({ error: z.enum(ERROR_CODES), message: z.string() })
  .meta({ id: 'ProductionError', description: 'Production error body.' });

export const SandboxErrorSchema = z.object({ message: z.string() }).meta({ id: 'SandboxError', description: 'Sandbox error body.' });

export type Address = z.infer<typeof AddressSchema>;
export type EnrichmentRequest = z.infer<typeof EnrichmentRequestSchema>;
export type Household = z.infer<typeof HouseholdSchema>;
export type Career = z.infer<typeof CareerSchema>;
export type EnrichmentResponse = z.infer<typeof EnrichmentResponseSchema>;
export type ProductionResponse = z.infer<typeof ProductionResponseSchema>;
export type SandboxResponse = z.infer<typeof SandboxResponseSchema>;
export type ProductionError = z.infer<typeof ProductionErrorSchema>;

export type HouseholdField = keyof Household;
export type CareerField = keyof Career;

export const HOUSEHOLD_FIELDS = HouseholdSchema.keyof().options;
export const CAREER_FIELDS = CareerSchema.keyof().options;

/** Fields every matched object carries whatever the account's entitlements. */
export const ALWAYS_HOUSEHOLD_FIELDS: readonly HouseholdField[] = ['windfall_id', 'confidence'];
export const ALWAYS_CAREER_FIELDS: readonly CareerField[] = ['confidence'];

/** The contract's political category: special-category data, answered only to accounts entitled to it. */
export const POLITICAL_HOUSEHOLD_FIELDS: readonly HouseholdField[] = ['political_donor', 'top_political_donor', 'political_party'];
