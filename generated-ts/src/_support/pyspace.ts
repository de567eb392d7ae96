// Written by generator/typescript.py from Python's str.isspace(); do not edit.
/** Python's white space as the inside of a regex character class. */
export const PY_SPACE_CLASS = "\\x09-\\x0d\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
