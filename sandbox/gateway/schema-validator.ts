import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';

/**
 * One JSON-Schema validator for every MCP server and client of the process. The SDK makes a new
 * Ajv for each by default, which cost more per case run than the rest of the session setup.
 */
export const sharedSchemaValidator = new AjvJsonSchemaValidator();
