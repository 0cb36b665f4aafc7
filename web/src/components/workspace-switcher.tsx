interface WorkspaceOption {
  id: string;
  name: string;
  slug: string;
  role: string;
  personal: boolean;
}

/** A native select, so keyboards, screen readers and phones handle it as they handle any other. */
export function WorkspaceSwitcher(props: {
  workspaces: WorkspaceOption[];
  value: string;
  onChange: (id: string) => void;
}) {
  return (
    <label class="workspace-switcher">
      <span>Workspace</span>
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        {props.workspaces.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name}
            {w.personal ? ' (personal)' : ''} · {w.role}
          </option>
        ))}
      </select>
    </label>
  );
}
