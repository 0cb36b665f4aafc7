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
    // Labelled by id, not by wrapping: a wrapping label's name took in the chosen option's text.
    <div class="workspace-switcher">
      <label for="workspace-switcher">Workspace</label>
      <select
        id="workspace-switcher"
        value={props.value}
        onChange={(e) => props.onChange(e.currentTarget.value)}
      >
        {props.workspaces.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name}
            {w.personal ? ' (personal)' : ''} · {w.role}
          </option>
        ))}
      </select>
    </div>
  );
}
