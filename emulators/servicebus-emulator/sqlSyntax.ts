/**
 * The syntax tree of Service Bus's SQL filter language (a SQL-92 subset over system and user
 * properties), shared by the parser, the evaluator and rule actions. It imports nothing, so that
 * every file of the filter can depend on it without a cycle.
 */
export type Value = string | number | boolean | null;

export type PropertyReference = { readonly op: 'property'; readonly scope: 'sys' | 'user'; readonly name: string };

export type Expression =
  | { readonly op: 'literal'; readonly value: Value }
  | PropertyReference
  | { readonly op: 'arith'; readonly operator: ArithmeticOperator; readonly left: Expression; readonly right: Expression }
  | { readonly op: 'negate'; readonly operand: Expression };

export type ArithmeticOperator = '+' | '-' | '*' | '/' | '%';
export type ComparisonOperator = '=' | '<>' | '<' | '<=' | '>' | '>=';

export type Predicate =
  | { readonly op: 'and' | 'or'; readonly left: Predicate; readonly right: Predicate }
  | { readonly op: 'not'; readonly operand: Predicate }
  | { readonly op: 'compare'; readonly operator: ComparisonOperator; readonly left: Expression; readonly right: Expression }
  | { readonly op: 'is-null'; readonly negated: boolean; readonly operand: Expression }
  | { readonly op: 'in'; readonly negated: boolean; readonly operand: Expression; readonly list: readonly Expression[] }
  | { readonly op: 'like'; readonly negated: boolean; readonly operand: Expression; readonly pattern: string; readonly escape?: string }
  | { readonly op: 'exists'; readonly property: PropertyReference }
  | { readonly op: 'value'; readonly operand: Expression };

/** Thrown for a filter Service Bus would refuse when the rule is created (a 400 there). */
export class SqlFilterSyntaxError extends Error {
  constructor(expression: string, problem: string) {
    super(`SQL filter ${JSON.stringify(expression)}: ${problem}`);
    this.name = 'SqlFilterSyntaxError';
  }
}
