// Name tables for the synthetic snapshot: first names by sex and surnames in US frequency order (drawn
// with Zipf-like weights so common full names repeat), French-Canadian surnames, and common nicknames.
import { Weighted } from './random.ts';

/** US male first names, most frequent first (Social Security and census rankings across generations). */
const MALE = [
  'James', 'Robert', 'John', 'Michael', 'David', 'William', 'Richard', 'Joseph', 'Thomas', 'Christopher',
  'Charles', 'Daniel', 'Matthew', 'Anthony', 'Mark', 'Donald', 'Steven', 'Andrew', 'Paul', 'Joshua',
  'Kenneth', 'Kevin', 'Brian', 'George', 'Timothy', 'Ronald', 'Jason', 'Edward', 'Jeffrey', 'Ryan',
  'Jacob', 'Gary', 'Nicholas', 'Eric', 'Jonathan', 'Stephen', 'Larry', 'Justin', 'Scott', 'Brandon',
  'Benjamin', 'Samuel', 'Gregory', 'Alexander', 'Patrick', 'Frank', 'Raymond', 'Jack', 'Dennis', 'Jerry',
  'Tyler', 'Aaron', 'Jose', 'Adam', 'Nathan', 'Henry', 'Zachary', 'Douglas', 'Peter', 'Kyle',
  'Noah', 'Ethan', 'Jeremy', 'Walter', 'Christian', 'Keith', 'Roger', 'Terry', 'Austin', 'Sean',
  'Gerald', 'Carl', 'Harold', 'Dylan', 'Arthur', 'Lawrence', 'Jordan', 'Jesse', 'Bryan', 'Billy',
  'Bruce', 'Gabriel', 'Joe', 'Logan', 'Alan', 'Juan', 'Albert', 'Willie', 'Elijah', 'Wayne',
  'Randy', 'Vincent', 'Mason', 'Roy', 'Ralph', 'Bobby', 'Russell', 'Bradley', 'Philip', 'Eugene',
  'Carlos', 'Luis', 'Miguel', 'Liam', 'Lucas', 'Oliver', 'Wei', 'Raj', 'Hiroshi', 'Mohammed',
  'Isaac', 'Caleb', 'Luke', 'Evan', 'Ian', 'Marcus', 'Victor', 'Martin', 'Craig', 'Todd',
] as const;

/** US female first names, most frequent first. */
const FEMALE = [
  'Mary', 'Patricia', 'Jennifer', 'Linda', 'Elizabeth', 'Barbara', 'Susan', 'Jessica', 'Sarah', 'Karen',
  'Lisa', 'Nancy', 'Betty', 'Sandra', 'Margaret', 'Ashley', 'Kimberly', 'Emily', 'Donna', 'Michelle',
  'Carol', 'Amanda', 'Melissa', 'Deborah', 'Stephanie', 'Dorothy', 'Rebecca', 'Sharon', 'Laura', 'Cynthia',
  'Amy', 'Kathleen', 'Angela', 'Shirley', 'Brenda', 'Emma', 'Anna', 'Pamela', 'Nicole', 'Samantha',
  'Katherine', 'Christine', 'Helen', 'Debra', 'Rachel', 'Carolyn', 'Janet', 'Maria', 'Catherine', 'Heather',
  'Diane', 'Olivia', 'Julie', 'Joyce', 'Victoria', 'Ruth', 'Virginia', 'Lauren', 'Kelly', 'Christina',
  'Joan', 'Evelyn', 'Judith', 'Andrea', 'Hannah', 'Megan', 'Cheryl', 'Jacqueline', 'Martha', 'Madison',
  'Teresa', 'Gloria', 'Sara', 'Janice', 'Ann', 'Kathryn', 'Abigail', 'Sophia', 'Frances', 'Jean',
  'Alice', 'Judy', 'Isabella', 'Julia', 'Grace', 'Amber', 'Denise', 'Danielle', 'Marilyn', 'Beverly',
  'Charlotte', 'Natalie', 'Theresa', 'Diana', 'Brittany', 'Doris', 'Kayla', 'Alexis', 'Lori', 'Marie',
  'Ava', 'Mia', 'Chloe', 'Zoe', 'Lily', 'Ella', 'Priya', 'Mei', 'Yuki', 'Fatima',
  'Rosa', 'Ana', 'Carmen', 'Lucia', 'Allison', 'Tiffany', 'Erin', 'Crystal', 'Monica', 'Vanessa',
] as const;

/** US surnames in 2010 census rank order (a selection: the top ranks in full, then a spread). */
const SURNAMES = [
  'Smith', 'Johnson', 'Williams', 'Brown', 'Jones', 'Garcia', 'Miller', 'Davis', 'Rodriguez', 'Martinez',
  'Hernandez', 'Lopez', 'Gonzalez', 'Wilson', 'Anderson', 'Thomas', 'Taylor', 'Moore', 'Jackson', 'Martin',
  'Lee', 'Perez', 'Thompson', 'White', 'Harris', 'Sanchez', 'Clark', 'Ramirez', 'Lewis', 'Robinson',
  'Walker', 'Young', 'Allen', 'King', 'Wright', 'Scott', 'Torres', 'Nguyen', 'Hill', 'Flores',
  'Green', 'Adams', 'Nelson', 'Baker', 'Hall', 'Rivera', 'Campbell', 'Mitchell', 'Carter', 'Roberts',
  'Gomez', 'Phillips', 'Evans', 'Turner', 'Diaz', 'Parker', 'Cruz', 'Edwards', 'Collins', 'Reyes',
  'Stewart', 'Morris', 'Morales', 'Murphy', 'Cook', 'Rogers', 'Gutierrez', 'Ortiz', 'Morgan', 'Cooper',
  'Peterson', 'Bailey', 'Reed', 'Kelly', 'Howard', 'Ramos', 'Kim', 'Cox', 'Ward', 'Richardson',
  'Watson', 'Brooks', 'Chavez', 'Wood', 'James', 'Bennett', 'Gray', 'Mendoza', 'Ruiz', 'Hughes',
  'Price', 'Alvarez', 'Castillo', 'Sanders', 'Patel', 'Myers', 'Long', 'Ross', 'Foster', 'Jimenez',
  'Powell', 'Jenkins', 'Perry', 'Russell', 'Sullivan', 'Bell', 'Coleman', 'Butler', 'Henderson', 'Barnes',
  'Gonzales', 'Fisher', 'Vasquez', 'Simmons', 'Romero', 'Jordan', 'Patterson', 'Alexander', 'Hamilton', 'Graham',
  'Reynolds', 'Griffin', 'Wallace', 'Moreno', 'West', 'Cole', 'Hayes', 'Bryant', 'Herrera', 'Gibson',
  'Ellis', 'Tran', 'Medina', 'Aguilar', 'Stevens', 'Murray', 'Ford', 'Castro', 'Marshall', 'Owens',
  'Harrison', 'Fernandez', 'McDonald', 'Woods', 'Washington', 'Kennedy', 'Wells', 'Vargas', 'Henry', 'Chen',
  'Freeman', 'Webb', 'Tucker', 'Guzman', 'Burns', 'Crawford', 'Olson', 'Simpson', 'Porter', 'Hunter',
  'Gordon', 'Mendez', 'Silva', 'Shaw', 'Snyder', 'Mason', 'Dixon', 'Munoz', 'Hunt', 'Hicks',
  'Holmes', 'Palmer', 'Wagner', 'Black', 'Robertson', 'Boyd', 'Rose', 'Stone', 'Salazar', 'Fox',
  'Warren', 'Mills', 'Meyer', 'Rice', 'Schmidt', 'Garza', 'Daniels', 'Ferguson', 'Nichols', 'Stephens',
  'Soto', 'Weaver', 'Ryan', 'Gardner', 'Payne', 'Grant', 'Dunn', 'Kelley', 'Spencer', 'Hawkins',
  'Arnold', 'Pierce', 'Vazquez', 'Hansen', 'Peters', 'Santos', 'Hart', 'Bradley', 'Knight', 'Elliott',
  'Cunningham', 'Duncan', 'Armstrong', 'Hudson', 'Carroll', 'Lane', 'Riley', 'Andrews', 'Alvarado', 'Ray',
  'Delgado', 'Berry', 'Perkins', 'Hoffman', 'Johnston', 'Matthews', 'Pena', 'Richards', 'Contreras', 'Willis',
  'Carpenter', 'Lawrence', 'Sandoval', 'Guerrero', 'George', 'Chapman', 'Rios', 'Estrada', 'Ortega', 'Watkins',
  'Greene', 'Nunez', 'Wheeler', 'Valdez', 'Harper', 'Burke', 'Larson', 'Santiago', 'Maldonado', 'Morrison',
  'Franklin', 'Carlson', 'Austin', 'Dominguez', 'Carr', 'Lawson', 'Jacobs', "O'Brien", 'Lynch', 'Singh',
  'Vega', 'Bishop', 'Montgomery', 'Oliver', 'Jensen', 'Harvey', 'Williamson', 'Gilbert', 'Dean', 'Sims',
  'Espinoza', 'Howell', 'Li', 'Wong', 'Reid', 'Hanson', 'Le', 'McCoy', 'Garrett', 'Burton',
  'Fuller', 'Wang', 'Weber', 'Welch', 'Rojas', 'Lucas', 'Marquez', 'Fields', 'Park', 'Yang',
  'Little', 'Banks', 'Padilla', 'Day', 'Walsh', 'Bowman', 'Schultz', 'Luna', 'Fowler', 'Mejia',
  'Davidson', 'Acosta', 'Brewer', 'May', 'Holland', 'Juarez', 'Newman', 'Pearson', 'Curtis', 'Cortez',
  'Douglas', 'Schneider', 'Joseph', 'Barrett', 'Navarro', 'Figueroa', 'Keller', 'Avila', 'Wade', 'Molina',
  'Shah', 'Nakamura', 'Kowalski', 'Goldberg', 'Rosenberg', 'Friedman', 'Cohen', 'Murphy-Jones', 'St. Clair', 'De la Cruz',
] as const;

/** The most frequent surnames of Quebec and French Canada, for part of the Canadian households. */
const FRENCH_CANADIAN = [
  'Tremblay', 'Gagnon', 'Roy', 'Côté', 'Bouchard', 'Gauthier', 'Morin', 'Lavoie', 'Fortin', 'Gagné',
  'Ouellet', 'Pelletier', 'Bélanger', 'Lévesque', 'Bergeron', 'Leblanc', 'Paquette', 'Girard', 'Simard', 'Boucher',
] as const;

export type Sex = 'F' | 'M';

export const maleFirstNames = Weighted.zipf(MALE, 1, 6);
export const femaleFirstNames = Weighted.zipf(FEMALE, 1, 6);
export const surnames = Weighted.zipf(SURNAMES, 1, 10);
export const frenchCanadianSurnames = Weighted.zipf(FRENCH_CANADIAN, 0.8, 3);

export function firstNames(sex: Sex): Weighted<string> {
  return sex === 'F' ? femaleFirstNames : maleFirstNames;
}

/** Common nicknames a caller may type instead of the formal first name. */
export const NICKNAMES: Readonly<Record<string, readonly string[]>> = {
  James: ['Jim', 'Jimmy', 'Jamie'], Robert: ['Bob', 'Rob', 'Bobby'], John: ['Jack', 'Johnny'],
  Michael: ['Mike', 'Mikey'], David: ['Dave'], William: ['Bill', 'Will', 'Billy'], Richard: ['Rick', 'Rich', 'Dick'],
  Joseph: ['Joe', 'Joey'], Thomas: ['Tom', 'Tommy'], Christopher: ['Chris'], Charles: ['Charlie', 'Chuck'],
  Daniel: ['Dan', 'Danny'], Matthew: ['Matt'], Anthony: ['Tony'], Donald: ['Don'], Steven: ['Steve'],
  Andrew: ['Andy', 'Drew'], Joshua: ['Josh'], Kenneth: ['Ken', 'Kenny'], Timothy: ['Tim'], Ronald: ['Ron'],
  Edward: ['Ed', 'Eddie', 'Ted'], Jeffrey: ['Jeff'], Jacob: ['Jake'], Nicholas: ['Nick'], Jonathan: ['Jon'],
  Stephen: ['Steve'], Lawrence: ['Larry'], Benjamin: ['Ben'], Samuel: ['Sam'], Gregory: ['Greg'],
  Alexander: ['Alex'], Patrick: ['Pat'], Raymond: ['Ray'], Gerald: ['Jerry'], Zachary: ['Zach'],
  Douglas: ['Doug'], Peter: ['Pete'], Walter: ['Walt'], Harold: ['Harry'], Bradley: ['Brad'], Philip: ['Phil'],
  Eugene: ['Gene'], Albert: ['Al'], Victor: ['Vic'], Vincent: ['Vince'], Gabriel: ['Gabe'], Isaac: ['Ike'],
  Mary: ['Molly'], Patricia: ['Pat', 'Patty', 'Trish'], Jennifer: ['Jen', 'Jenny'], Elizabeth: ['Liz', 'Beth', 'Betsy'],
  Barbara: ['Barb'], Susan: ['Sue', 'Susie'], Jessica: ['Jess'], Margaret: ['Maggie', 'Peggy', 'Meg'],
  Kimberly: ['Kim'], Deborah: ['Deb', 'Debbie'], Stephanie: ['Steph'], Dorothy: ['Dot', 'Dottie'],
  Rebecca: ['Becky', 'Becca'], Cynthia: ['Cindy'], Kathleen: ['Kathy', 'Kate'], Pamela: ['Pam'],
  Samantha: ['Sam'], Katherine: ['Kate', 'Katie', 'Kathy'], Christine: ['Chris'], Debra: ['Deb'],
  Victoria: ['Vicky', 'Tori'], Christina: ['Tina'], Judith: ['Judy'], Jacqueline: ['Jackie'],
  Madison: ['Maddie'], Kathryn: ['Kate', 'Katie'], Abigail: ['Abby'], Frances: ['Fran'], Theresa: ['Terry'],
  Teresa: ['Terry'], Isabella: ['Bella'], Natalie: ['Nat'], Alexis: ['Lexi'], Allison: ['Ally'],
  Danielle: ['Dani'], Beverly: ['Bev'], Catherine: ['Cathy', 'Kate'], Virginia: ['Ginny'], Sandra: ['Sandy'],
};
