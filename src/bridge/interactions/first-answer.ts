/**
 * The first answer among several askers that may each have none (`undefined`): resolves with the
 * first one that has an answer, or with undefined once every asker came back without one. Askers
 * must not reject; a failure is theirs to turn into an answer (a refusal) or into none.
 */
export function firstAnswer<T>(answers: ReadonlyArray<Promise<T | undefined>>): Promise<T | undefined> {
  if (answers.length === 0) return Promise.resolve(undefined);
  return new Promise<T | undefined>((resolve) => {
    let remaining = answers.length;
    for (const answer of answers) {
      void answer.then((value) => {
        remaining--;
        if (value !== undefined) resolve(value);
        else if (remaining === 0) resolve(undefined);
      });
    }
  });
}
