import { parseFieldSelector, parseLabelSelector, SelectorSyntaxError } from '../../lib/store/selector';

function syntaxError(run: () => unknown): SelectorSyntaxError {
  try {
    run();
  } catch (error) {
    if (error instanceof SelectorSyntaxError) return error;
    throw error;
  }
  throw new Error('expected a SelectorSyntaxError');
}

describe('parseLabelSelector', () => {
  it('selects everything when empty or blank', () => {
    expect(parseLabelSelector('').requirements).toEqual([]);
    expect(parseLabelSelector('   ').matches(undefined)).toBe(true);
    expect(parseLabelSelector('').matches({ a: 'b' })).toBe(true);
  });

  it('parses every operator into a requirement', () => {
    const selector = parseLabelSelector('a=1,b==2,c!=3,d in (x,y),e notin (z),f,!g,h>4,i < 05');
    expect(selector.requirements).toEqual([
      { key: 'a', operator: 'Equals', values: ['1'] },
      { key: 'b', operator: 'Equals', values: ['2'] },
      { key: 'c', operator: 'NotEquals', values: ['3'] },
      { key: 'd', operator: 'In', values: ['x', 'y'] },
      { key: 'e', operator: 'NotIn', values: ['z'] },
      { key: 'f', operator: 'Exists', values: [] },
      { key: 'g', operator: 'DoesNotExist', values: [] },
      { key: 'h', operator: 'GreaterThan', values: ['4'] },
      { key: 'i', operator: 'LessThan', values: ['05'] },
    ]);
    expect(selector.toString()).toBe('a=1,b=2,c!=3,d in (x,y),e notin (z),f,!g,h>4,i<05');
  });

  it('tolerates whitespace around every token', () => {
    const selector = parseLabelSelector('  app = web ,  tier  in ( a , b ) , ! legacy , x!= y  ');
    expect(selector.toString()).toBe('app=web,!legacy,tier in (a,b),x!=y');
  });

  it('sorts requirements by key and values within sets in toString', () => {
    expect(parseLabelSelector('z=1,a in (c,b,a),m').toString()).toBe('a in (a,b,c),m,z=1');
  });

  it('round-trips its canonical text', () => {
    const text = 'app=web,env notin (dev,test),example.com/tier in (back,front),!legacy,team';
    const once = parseLabelSelector(text).toString();
    expect(parseLabelSelector(once).toString()).toBe(once);
  });

  it('accepts an empty value after = and != and inside value lists', () => {
    expect(parseLabelSelector('a=').requirements[0]!.values).toEqual(['']);
    expect(parseLabelSelector('a!=,b').requirements[0]!.values).toEqual(['']);
    expect(parseLabelSelector('a in (x,)').requirements[0]!.values).toEqual(['', 'x']);
    // apimachinery's own example: "x in (foo,,baz),y,z notin ()"; `()` is the empty value alone.
    expect(parseLabelSelector('x in (foo,,baz),y,z notin ()').requirements.map((r) => r.values)).toEqual([['', 'baz', 'foo'], [], ['']]);
    expect(parseLabelSelector('a in ()').matches({ a: '' })).toBe(true);
    expect(parseLabelSelector('a=').matches({ a: '' })).toBe(true);
    expect(parseLabelSelector('a=').matches({})).toBe(false);
  });

  describe('matching', () => {
    const labels = { app: 'web', tier: 'front' };
    it.each([
      ['app=web', true],
      ['app==web', true],
      ['app=db', false],
      ['app!=db', true],
      ['app!=web', false],
      ['missing!=x', true],
      ['tier in (front,back)', true],
      ['tier in (back)', false],
      ['missing in (x)', false],
      ['tier notin (back)', true],
      ['tier notin (front)', false],
      ['missing notin (x)', true],
      ['app', true],
      ['missing', false],
      ['!missing', true],
      ['!app', false],
      ['app=web,tier=front', true],
      ['app=web,tier=back', false],
    ])('%s → %s', (text, expected) => {
      expect(parseLabelSelector(text).matches(labels)).toBe(expected);
    });

    it.each([
      ['replicas>2', { replicas: '3' }, true],
      ['replicas>3', { replicas: '3' }, false],
      ['replicas<4', { replicas: '3' }, true],
      ['replicas<3', { replicas: '3' }, false],
      ['replicas>2', { replicas: '+3' }, true],
      ['replicas<0', { replicas: '-1' }, true],
      ['replicas>2', { replicas: 'three' }, false],
      ['replicas>2', { replicas: '9223372036854775808' }, false],
      ['replicas<9223372036854775807', { replicas: '9223372036854775806' }, true],
      ['replicas>2', {}, false],
      ['replicas<2', {}, false],
    ])('%s on %j → %s (the label read as a 64-bit integer; absent or not an integer never matches)', (text, labels, expected) => {
      expect(parseLabelSelector(text).matches(labels as Record<string, string>)).toBe(expected);
    });

    it('treats undefined labels as having no keys', () => {
      expect(parseLabelSelector('a!=b,c notin (d),!e').matches(undefined)).toBe(true);
      expect(parseLabelSelector('a').matches(undefined)).toBe(false);
    });

    it('ignores inherited properties: constructor and toString are not labels', () => {
      expect(parseLabelSelector('constructor').matches({})).toBe(false);
      expect(parseLabelSelector('!constructor').matches({})).toBe(true);
      expect(parseLabelSelector('toString!=x').matches({})).toBe(true);
    });

    it('reads hostile own keys from wire JSON as ordinary labels', () => {
      const wire = JSON.parse('{"__proto__":"x","constructor":"web"}') as Record<string, string>;
      expect(parseLabelSelector('constructor=web').matches(wire)).toBe(true);
      expect(parseLabelSelector('constructor in (web)').matches(wire)).toBe(true);
      expect(Object.getPrototypeOf({})).toBe(Object.prototype);
    });

    it('treats a non-string label value as absent', () => {
      const wire = JSON.parse('{"a":{"b":1}}') as Record<string, string>;
      expect(parseLabelSelector('a').matches(wire)).toBe(false);
      expect(parseLabelSelector('a!=x').matches(wire)).toBe(true);
    });
  });

  describe('validation', () => {
    it('accepts qualified keys with a DNS prefix', () => {
      expect(parseLabelSelector('app.kubernetes.io/name=web').requirements[0]!.key).toBe('app.kubernetes.io/name');
      expect(parseLabelSelector('a_b.c-d=x').requirements[0]!.key).toBe('a_b.c-d');
    });

    it.each([
      ['-a=b', 0],
      ['a-=b', 0],
      ['Example.com/a=b', 0],
      ['a/b/c=d', 0],
      ['/a=b', 0],
      ['example.com/=b', 0],
      ['__proto__=x', 0],
      [`${'a'.repeat(64)}=b`, 0],
      [`${'a'.repeat(254)}/b=c`, 0],
      ['a=-b', 2],
      ['a=b_', 2],
      [`a=${'b'.repeat(64)}`, 2],
      ['a in (ok,bad!)', 12],
    ])('rejects %s at position %d', (text, position) => {
      const error = syntaxError(() => parseLabelSelector(text));
      expect(error.selector).toBe(text);
      expect(error.position).toBe(position);
    });

    it('accepts keys and values at the maximum length', () => {
      const name = 'a'.repeat(63);
      expect(parseLabelSelector(`${name}=${name}`).requirements).toHaveLength(1);
    });
  });

  describe('syntax errors', () => {
    it.each([
      ['a=b,', 4],
      [',a=b', 0],
      ['a=b,,c=d', 4],
      ['a in', 4],
      ['a in (b', 7],
      ['a in (b c)', 8],
      ['a notin b', 8],
      ['a b', 2],
      ['a=b c', 4],
      ['a>', 2],
      ['a>b', 2],
      ['a<-1', 2],
      ['a>=1', 2],
      ['a>9223372036854775808', 2],
      ['!', 1],
      ['!a=b', 2],
      ['a=(b)', 2],
      ['=b', 0],
    ])('rejects %s at position %d', (text, position) => {
      const error = syntaxError(() => parseLabelSelector(text));
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('SelectorSyntaxError');
      expect(error.position).toBe(position);
      expect(error.message).toContain(JSON.stringify(text));
    });
  });
});

describe('parseFieldSelector', () => {
  const fields: Record<string, string> = { 'metadata.name': 'web', 'spec.nodeName': 'node-1', 'status.phase': 'Running' };
  const read = (field: string): string | undefined => fields[field];

  it('selects everything when empty, skipping empty terms', () => {
    expect(parseFieldSelector('').requirements).toEqual([]);
    expect(parseFieldSelector(',,').matches(read)).toBe(true);
  });

  it('parses =, == and != terms separated by commas', () => {
    expect(parseFieldSelector('metadata.name=web, spec.nodeName==node-1 ,status.phase!=Failed').requirements).toEqual([
      { field: 'metadata.name', operator: 'Equals', value: 'web' },
      { field: 'spec.nodeName', operator: 'Equals', value: 'node-1' },
      { field: 'status.phase', operator: 'NotEquals', value: 'Failed' },
    ]);
  });

  it.each([
    ['metadata.name=web', true],
    ['metadata.name=db', false],
    ['status.phase!=Running', false],
    ['status.phase!=Failed,spec.nodeName=node-1', true],
    ['spec.missing=', true],
    ['spec.missing!=', false],
    ['spec.missing!=x', true],
  ])('%s → %s', (text, expected) => {
    expect(parseFieldSelector(text).matches(read)).toBe(expected);
  });

  it('unescapes \\, \\= and \\\\ in values', () => {
    expect(parseFieldSelector('a=x\\,y\\=z\\\\,b=c').requirements).toEqual([
      { field: 'a', operator: 'Equals', value: 'x,y=z\\' },
      { field: 'b', operator: 'Equals', value: 'c' },
    ]);
  });

  it.each([
    ['a', 0],
    ['a=b,c', 4],
    ['=b', 0],
    ['a=b=c', 3],
    ['a=b\\x', 3],
    ['a=b\\', 3],
  ])('rejects %s at position %d', (text, position) => {
    const error = syntaxError(() => parseFieldSelector(text));
    expect(error.selector).toBe(text);
    expect(error.position).toBe(position);
  });
});
