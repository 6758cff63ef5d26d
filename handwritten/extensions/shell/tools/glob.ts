// Glob patterns as `grep`, `find` and `.gitignore` use them (the ripgrep / gitignore dialect):
// `*` and `?` never cross `/`, `**` as a whole path segment spans folders, `[abc]`, `[!abc]`,
// `{a,b}` and `\x` escapes. A pattern without `/` matches a file's name at any depth; a pattern
// with `/` matches the path relative to the search root.

/** Compiles a glob to an anchored regular expression over a `/`-separated relative path. */
export function globToRegExp(glob: string): RegExp {
  let out = "";
  let braces = 0;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === "*") {
      if (glob[i + 1] === "*") {
        const atStart = i === 0 || glob[i - 1] === "/";
        const atEnd = i + 2 === glob.length || glob[i + 2] === "/";
        if (atStart && atEnd) {
          if (i + 2 === glob.length) out += i === 0 ? ".*" : "(?:.*)?"; // "**" or "a/**"
          else {
            out += "(?:[^/]*/)*"; // "**/"
            i++; // also consume the "/"
          }
          i++;
          continue;
        }
        i++; // "a**b" behaves like "a*b"
      }
      out += "[^/]*";
    } else if (c === "?") {
      out += "[^/]";
    } else if (c === "[") {
      const close = glob.indexOf("]", i + 2);
      if (close === -1) {
        out += "\\[";
        continue;
      }
      let body = glob.slice(i + 1, close);
      const negate = body.startsWith("!") || body.startsWith("^");
      if (negate) body = body.slice(1);
      out += `[${negate ? "^/" : ""}${body.replace(/[\\\]^]/g, (m) => `\\${m}`)}]`;
      i = close;
    } else if (c === "{") {
      braces++;
      out += "(?:";
    } else if (c === "}" && braces > 0) {
      braces--;
      out += ")";
    } else if (c === "," && braces > 0) {
      out += "|";
    } else if (c === "\\" && i + 1 < glob.length) {
      i++;
      out += (glob[i] as string).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    } else {
      out += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    }
  }
  if (braces > 0) throw new Error("unclosed { in glob");
  return new RegExp(`^${out}$`);
}

/** A compiled glob filter following the rule above. */
export interface GlobMatcher {
  (relativePath: string): boolean;
}

export function compileGlob(glob: string): GlobMatcher {
  const trimmed = glob.replace(/^\.\//, "");
  const anchored = trimmed.includes("/");
  const regex = globToRegExp(anchored ? trimmed.replace(/^\//, "") : trimmed);
  return (relativePath: string): boolean => {
    const subject = anchored ? relativePath : relativePath.slice(relativePath.lastIndexOf("/") + 1);
    return regex.test(subject);
  };
}
