// The Lightning Web Component tests of this Salesforce DX project (npm run test:lwc at the repository
// root): sfdx-lwc-jest's configuration, which needs sfdx-project.json beside it and resolves `c/*`,
// `lightning/*` and `@salesforce/*` imports the way the platform does.
const { jestConfig } = require('@salesforce/sfdx-lwc-jest/config');

module.exports = {
  ...jestConfig,
  modulePathIgnorePatterns: ['<rootDir>/.localdevserver'],
};
