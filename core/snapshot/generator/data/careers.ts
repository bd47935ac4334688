// Career records of the synthetic snapshot: job titles by level and function, the function mix of each
// kind of employer, and the dates and booleans of a career kept consistent with each other.
import type { Employer, Workforce } from './companies.ts';
import { type Rng, Weighted } from './random.ts';

export type JobLevel = 'Individual Contributor' | 'Manager' | 'Director' | 'VP' | 'C-Suite';

/** Titles per level: individual contributor, manager, director, VP, chief. */
type Titles = readonly [ic: readonly string[], manager: readonly string[], director: readonly string[], vp: readonly string[], chief: readonly string[]];

const TITLES: Readonly<Record<string, Titles>> = {
  Engineering: [
    ['Software Engineer', 'Senior Software Engineer', 'Mechanical Engineer', 'Civil Engineer', 'QA Engineer', 'Data Engineer'],
    ['Engineering Manager'],
    ['Director of Engineering'],
    ['Vice President of Engineering'],
    ['Chief Technology Officer'],
  ],
  'Information Technology': [
    ['Systems Administrator', 'IT Support Specialist', 'Network Engineer', 'Database Administrator'],
    ['IT Manager'],
    ['Director of Information Technology'],
    ['Vice President of Information Technology'],
    ['Chief Information Officer'],
  ],
  Finance: [
    ['Accountant', 'Financial Analyst', 'Senior Accountant', 'Staff Accountant'],
    ['Finance Manager', 'Controller'],
    ['Director of Finance'],
    ['Vice President of Finance'],
    ['Chief Financial Officer'],
  ],
  Sales: [
    ['Account Executive', 'Sales Representative', 'Business Development Representative'],
    ['Sales Manager', 'Regional Sales Manager'],
    ['Director of Sales'],
    ['Vice President of Sales'],
    ['Chief Revenue Officer'],
  ],
  Marketing: [
    ['Marketing Specialist', 'Content Strategist', 'Marketing Coordinator'],
    ['Marketing Manager', 'Brand Manager'],
    ['Director of Marketing'],
    ['Vice President of Marketing'],
    ['Chief Marketing Officer'],
  ],
  Operations: [
    ['Operations Analyst', 'Logistics Coordinator', 'Operations Specialist', 'Warehouse Associate'],
    ['Operations Manager', 'Plant Manager'],
    ['Director of Operations'],
    ['Vice President of Operations'],
    ['Chief Operating Officer'],
  ],
  'Human Resources': [
    ['HR Generalist', 'Recruiter', 'Benefits Specialist'],
    ['HR Manager'],
    ['Director of Human Resources'],
    ['Vice President of People'],
    ['Chief People Officer'],
  ],
  Legal: [
    ['Attorney', 'Associate Attorney', 'Paralegal'],
    ['Senior Counsel'],
    ['Associate General Counsel'],
    ['Deputy General Counsel'],
    ['Chief Legal Officer'],
  ],
  'Customer Success': [
    ['Customer Support Specialist', 'Customer Service Representative'],
    ['Customer Support Manager'],
    ['Director of Customer Success'],
    ['Vice President of Customer Success'],
    ['Chief Customer Officer'],
  ],
  Product: [
    ['Product Manager', 'Product Designer', 'UX Researcher'],
    ['Group Product Manager'],
    ['Director of Product'],
    ['Vice President of Product'],
    ['Chief Product Officer'],
  ],
  Research: [
    ['Research Scientist', 'Research Associate', 'Data Scientist'],
    ['Lab Manager'],
    ['Director of Research'],
    ['Vice President of Research'],
    ['Chief Science Officer'],
  ],
  Education: [
    ['Teacher', 'Professor', 'Assistant Professor', 'Lecturer', 'Instructional Coordinator'],
    ['Department Chair'],
    ['Dean'],
    ['Vice Provost'],
    ['President'],
  ],
  Healthcare: [
    ['Registered Nurse', 'Physician', 'Pharmacist', 'Physical Therapist', 'Medical Assistant'],
    ['Nurse Manager'],
    ['Director of Nursing'],
    ['Vice President of Clinical Services'],
    ['Chief Medical Officer'],
  ],
  Administrative: [
    ['Administrative Assistant', 'Executive Assistant', 'Office Coordinator'],
    ['Office Manager'],
    ['Director of Administration'],
    ['Vice President of Administration'],
    ['Chief Administrative Officer'],
  ],
  'Program Management': [
    ['Program Coordinator', 'Project Manager', 'Case Manager'],
    ['Program Manager'],
    ['Director of Programs'],
    ['Vice President of Programs'],
    ['Chief Program Officer'],
  ],
  Fundraising: [
    ['Development Associate', 'Grants Coordinator'],
    ['Development Manager'],
    ['Director of Development'],
    ['Vice President of Development'],
    ['Chief Development Officer'],
  ],
  'Public Safety': [['Police Officer', 'Firefighter', 'Emergency Dispatcher'], ['Lieutenant'], ['Captain'], ['Deputy Chief'], ['Chief of Police']],
};

const EXECUTIVE_TITLES = new Weighted([
  ['Chief Executive Officer', 50],
  ['President', 20],
  ['Founder and CEO', 12],
  ['Owner', 18],
] as const);
const STUDENT_TITLES_EDUCATIONAL = ['Teaching Assistant', 'Research Assistant', 'Graduate Assistant', 'Student Assistant'] as const;

const mix = (entries: Readonly<Record<string, number>>): Weighted<string> => new Weighted(Object.entries(entries));

const FUNCTION_MIX: Readonly<Record<Workforce, Weighted<string>>> = {
  tech: mix({
    Engineering: 30,
    Product: 8,
    Sales: 14,
    Marketing: 8,
    'Customer Success': 8,
    'Information Technology': 6,
    Finance: 6,
    'Human Resources': 4,
    Operations: 8,
    Legal: 2,
    Administrative: 4,
    Research: 2,
  }),
  health: mix({
    Healthcare: 45,
    Administrative: 12,
    Operations: 10,
    Finance: 8,
    'Human Resources': 5,
    'Information Technology': 6,
    Research: 6,
    Sales: 4,
    Marketing: 2,
    Legal: 2,
  }),
  finance: mix({
    Finance: 35,
    Sales: 15,
    Operations: 12,
    'Information Technology': 10,
    Legal: 5,
    Marketing: 5,
    'Human Resources': 4,
    'Customer Success': 8,
    Administrative: 6,
  }),
  industrial: mix({
    Operations: 38,
    Engineering: 20,
    Sales: 12,
    Finance: 8,
    'Human Resources': 5,
    Administrative: 8,
    'Information Technology': 4,
    Marketing: 3,
    Legal: 2,
  }),
  services: mix({
    Operations: 32,
    Sales: 20,
    'Customer Success': 14,
    Marketing: 10,
    Finance: 7,
    'Human Resources': 5,
    Administrative: 8,
    'Information Technology': 2,
    Legal: 2,
  }),
  legal: mix({ Legal: 55, Administrative: 20, Finance: 10, 'Human Resources': 5, Marketing: 5, 'Information Technology': 5 }),
  education: mix({ Education: 55, Administrative: 15, Research: 10, 'Information Technology': 5, Finance: 5, 'Human Resources': 5, Operations: 5 }),
  government: mix({
    'Program Management': 20,
    Administrative: 20,
    'Public Safety': 18,
    Operations: 15,
    Finance: 8,
    'Information Technology': 7,
    Legal: 5,
    'Human Resources': 4,
    Engineering: 3,
  }),
  nonprofit: mix({
    'Program Management': 35,
    Fundraising: 15,
    Administrative: 15,
    Marketing: 8,
    Finance: 8,
    'Human Resources': 5,
    Operations: 10,
    Healthcare: 4,
  }),
};

const LEVELS: readonly JobLevel[] = ['Individual Contributor', 'Manager', 'Director', 'VP', 'C-Suite'];

/** Level weights by household wealth tier (0: under $250K … 5: over $30M): richer households hold senior roles. */
const LEVEL_WEIGHTS_BY_TIER: readonly (readonly number[])[] = [
  [64, 22, 8, 4, 2],
  [54, 24, 12, 6, 4],
  [40, 25, 16, 11, 8],
  [25, 20, 20, 17, 18],
  [15, 15, 20, 22, 28],
  [8, 10, 17, 25, 40],
];
const levelTables = LEVEL_WEIGHTS_BY_TIER.map((weights) => new Weighted(LEVELS.map((level, i) => [level, weights[i] ?? 0] as const)));
const smallFirmLevelTables = LEVEL_WEIGHTS_BY_TIER.map(
  (weights) => new Weighted(LEVELS.map((level, i) => [level, (weights[i] ?? 0) + (level === 'C-Suite' ? 10 : 0)] as const)),
);

export interface CareerInput {
  readonly employer: Employer;
  /** 0–5, see LEVEL_WEIGHTS_BY_TIER. */
  readonly wealthTier: number;
  /** A young adult (18–25): mostly individual contributor, often a student. */
  readonly young: boolean;
  readonly linkedinUrl: string;
  /** Days since 1970-01-01 of the snapshot's version date. */
  readonly today: number;
}

const DAY_MS = 86_400_000;

export function isoDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/**
 * One career as a JSON object text, every field but confidence, in the contract's order. Consistency:
 * recently_changed_jobs exactly when the job started within 182 days; a promotion or a company change
 * is a job change; the retired and the possibly unemployed did not just change jobs; students are
 * individual contributors, mostly young and at educational employers.
 */
export function careerJson(rng: Rng, input: CareerInput): string {
  const { employer, young, today } = input;
  const educational = employer.category === 'Educational';
  const student = young ? rng.chance(educational ? 0.75 : 0.06) : rng.chance(0.004);
  let level: JobLevel;
  if (student) level = 'Individual Contributor';
  else if (young) level = rng.chance(0.92) ? 'Individual Contributor' : 'Manager';
  else {
    const small = employer.size === '1-10' || employer.size === '11-50';
    const tables = small ? smallFirmLevelTables : levelTables;
    const table = tables[Math.min(Math.max(input.wealthTier, 0), tables.length - 1)];
    level = table === undefined ? 'Individual Contributor' : table.draw(rng);
  }
  let jobFunction: string;
  let title: string;
  if (student && educational) {
    title = rng.pick(STUDENT_TITLES_EDUCATIONAL);
    jobFunction = title === 'Research Assistant' ? 'Research' : 'Education';
  } else if (level === 'C-Suite' && rng.chance(0.55)) {
    jobFunction = 'Executive';
    title = EXECUTIVE_TITLES.draw(rng);
  } else {
    jobFunction = FUNCTION_MIX[employer.workforce].draw(rng);
    const titles = TITLES[jobFunction] ?? TITLES.Operations;
    title = rng.pick(titles?.[LEVELS.indexOf(level)] ?? ['Associate']);
    if (student) title = `${jobFunction === 'Engineering' ? 'Engineering' : jobFunction} Intern`;
  }

  const retired = !young && !student && rng.chance(0.015);
  const unemployed = !retired && rng.chance(0.03);
  const changedJobs = !retired && !unemployed && rng.chance(young ? 0.2 : 0.09);
  const promoted = changedJobs && level !== 'Individual Contributor' && rng.chance(0.4);
  const changedCompanies = changedJobs && !promoted && rng.chance(0.75);
  const updated = today - rng.int(60);
  let start: number;
  if (changedJobs) start = updated - rng.int(Math.max(1, 182 - (today - updated)));
  else {
    const maxYears = young ? 4 : 30;
    const tenureDays = 183 + Math.floor(Math.min(maxYears * 365, -Math.log(1 - rng.next()) * (young ? 500 : 1900)));
    start = today - tenureDays;
  }
  const additional = rng.chance(level === 'C-Suite' ? 0.2 : 0.05);
  const head = {
    career_data_last_updated: isoDay(updated),
    linkedin_url: input.linkedinUrl,
    job_title: title,
    job_level: level,
    job_function: jobFunction,
    job_start_date: isoDay(start),
    recently_changed_jobs: changedJobs,
    recently_promoted: promoted,
    recently_retired: retired,
    recently_changed_companies: changedCompanies,
    possibly_student: student,
    possibly_unemployed: unemployed,
    possible_additional_jobs: additional,
  };
  const text = JSON.stringify(head);
  return `${text.slice(0, -1)},${employer.json}}`;
}
