// The dashboard page: hash routes (`#/` the goals and loops, `#/goal/<id>` one goal). Every string from a
// goal (agent, evaluator, check output, prompts) is rendered by Preact as a text node, never as HTML.

import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';

import { GoalList } from './goal-list.js';
import { GoalPage } from './goal-page.js';
import './style.css';

function currentRoute(): { page: 'list' } | { page: 'goal'; id: string } {
  const match = /^#\/goal\/([^/]+)$/.exec(window.location.hash);
  return match?.[1] === undefined ? { page: 'list' } : { page: 'goal', id: decodeURIComponent(match[1]) };
}

function App() {
  const [route, setRoute] = useState(currentRoute());
  useEffect(() => {
    const onHash = (): void => setRoute(currentRoute());
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">
          goald
        </a>
      </header>
      <main>{route.page === 'goal' ? <GoalPage key={route.id} id={route.id} /> : <GoalList />}</main>
    </>
  );
}

const root = document.getElementById('app');
if (root !== null) render(<App />, root);
