/** An expected tool failure: its message becomes an is_error tool_result for the model. */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}
